// SPDX-License-Identifier: GPL-3.0-or-later
// mock_upstream: a vLLM-like OpenAI server for SLP's integration tests and benchmarks.
#include "mockserver.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QSocketNotifier>

#include <csignal>
#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

namespace {

int g_signalPipe[2] = {-1, -1};

void onSignal(int)
{
    const char c = 1;
    // Only async-signal-safe work here; the event loop picks it up from the pipe.
    [[maybe_unused]] const auto n = ::write(g_signalPipe[1], &c, 1);
}

void raiseFileLimit()
{
    // Thousands of concurrent connections need more than the usual soft limit of 1024.
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("mock_upstream");

    QCommandLineParser parser;
    parser.setApplicationDescription("A vLLM-like OpenAI server with failure knobs for tests.");
    parser.addHelpOption();
    parser.addOption(
        {"listen", "Address to listen on (HOST:PORT, port 0 = any).", "addr", "127.0.0.1:0"});
    parser.addOption(
        {"models", "Comma-separated served models; empty = accept any model.", "list"});
    parser.addOption({"id-prefix", "Prefix of X-Request-Id values.", "prefix", "gdqz"});
    parser.addOption({"unix", "Also serve on a Unix socket at PATH.", "path"});
    parser.addOption({"ws-refuse", "Answer every WebSocket upgrade 403."});
    parser.addOption({"api-key",
                      "Like vLLM's --api-key: answer 401 to any request (but /health) without "
                      "exactly one \"Authorization: Bearer KEY\".",
                      "key"});
    parser.process(app);
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "mock_upstream: unexpected argument %s\n",
                     qPrintable(parser.positionalArguments().first()));
        return 2;
    }

    const QString listen = parser.value("listen");
    const qsizetype colon = listen.lastIndexOf(':');
    bool ok = false;
    const uint port = listen.mid(colon + 1).toUInt(&ok);
    QString host = colon > 0 ? listen.left(colon) : QStringLiteral("127.0.0.1");
    if (host.startsWith('[') && host.endsWith(']'))
        host = host.mid(1, host.size() - 2);
    const QHostAddress address(host);
    if (colon < 0 || !ok || port > 65535 || address.isNull()) {
        std::fprintf(stderr, "mock_upstream: bad --listen %s\n", qPrintable(listen));
        return 2;
    }
    QStringList models;
    for (const QString &m : parser.value("models").split(',', Qt::SkipEmptyParts))
        models << m.trimmed();

    raiseFileLimit();
    std::signal(SIGPIPE, SIG_IGN);
    if (::pipe(g_signalPipe) == 0) {
        std::signal(SIGTERM, onSignal);
        std::signal(SIGINT, onSignal);
        auto *notifier = new QSocketNotifier(g_signalPipe[0], QSocketNotifier::Read, &app);
        QObject::connect(notifier, &QSocketNotifier::activated, &app,
                         [] { QCoreApplication::quit(); });
    }

    slp::mock::MockServer server(models, parser.value("id-prefix").toLatin1());
    server.setRefusesWebSockets(parser.isSet("ws-refuse"));
    server.setApiKey(parser.value("api-key").toUtf8());
    if (!server.listen(address, static_cast<quint16>(port))) {
        std::fprintf(stderr, "mock_upstream: cannot listen on %s: %s\n", qPrintable(listen),
                     qPrintable(server.errorString()));
        return 1;
    }
    QString unixError;
    if (parser.isSet("unix") && !server.listenUnix(parser.value("unix"), &unixError)) {
        std::fprintf(stderr, "mock_upstream: cannot listen on unix:%s: %s\n",
                     qPrintable(parser.value("unix")), qPrintable(unixError));
        return 1;
    }
    const QString shown = address.protocol() == QAbstractSocket::IPv6Protocol
                              ? QStringLiteral("[%1]").arg(address.toString())
                              : address.toString();
    std::fprintf(stdout, "listening on %s:%u\n", qPrintable(shown), unsigned(server.port()));
    std::fflush(stdout);
    return app.exec();
}
