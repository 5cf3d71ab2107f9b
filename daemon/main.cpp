// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/commandline.h"
#include "app/daemon.h"
#include "app/healthcheck.h"
#include "app/yamldeadline.h"
#include "config/config.h"
#include "net/epolldispatcher.h"
#include "observe/logging.h"

#include <QCoreApplication>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <memory>
#include <optional>
#include <sys/resource.h>

using namespace slp;

namespace {
int printErrors(const QList<ConfigError> &errors)
{
    for (const ConfigError &e : errors)
        std::fprintf(stderr, "%s\n", qPrintable(e.toString()));
    std::fprintf(stderr, "slp: %lld config error%s; nothing was started\n",
                 static_cast<long long>(errors.size()), errors.size() == 1 ? "" : "s");
    return 1;
}

// glibc serves every allocation above 128 KiB-32 MiB with a fresh mmap and unmaps it on free,
// so each large request body was page-faulted in, zeroed and unmapped again in every buffer it
// passed through: half of slp's CPU on a 22 MB POST went to page faults (perf), and the hop
// cost +60 ms. From the heap those pages are mostly reused. With the socket transport the trim
// threshold goes up too: freed heap tops are kept for the next large body instead of being
// handed back and faulted in again (22 MB: +10-17 ms instead of +41-59 ms added; 1.2 MB:
// +0.4-0.9 ms instead of +2.2-2.7 ms, `bench/run.sh --quick`), and with every request on the
// worker threads' own arenas RSS stays flat (scripts/soak.sh --transport socket). Not with
// qnam: QNAM's threads each grow an arena of their own, which a high trim threshold never
// shrinks, and RSS crept up by 24 MB in a 10-minute soak; a malloc_trim(0) every 1 s or 10 s
// on top did not stop the creep (60 to 100 MB). GLIBC_TUNABLES=glibc.malloc.* wins.
void keepLargeBuffersOnTheHeap(const QString &transport)
{
    if (qEnvironmentVariable("GLIBC_TUNABLES").contains(QLatin1String("glibc.malloc.")))
        return;
    ::mallopt(M_MMAP_THRESHOLD, 256 * 1024 * 1024);
    if (transport == QLatin1String("socket"))
        ::mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
}

// Loads and compiles the file with the command line's overrides; used again on each reload.
Daemon::ConfigLoader loaderFor(const CommandLine &cl)
{
    return [cl]() -> ConfigResult {
        ConfigResult result = loadConfigFile(cl.configPath);
        if (auto *config = std::get_if<Config>(&result)) {
            if (!cl.listen.isEmpty()) {
                QString error;
                const auto listen = parseListenAddress(cl.listen, &error);
                if (!listen)
                    return QList<ConfigError>{
                        {QString(), 0, 0, QStringLiteral("--listen %1: %2").arg(cl.listen, error),
                         QStringLiteral("use :PORT, HOST:PORT, [IPv6]:PORT or unix:PATH")}};
                config->listen = *listen;
            }
            config->logRequests = config->logRequests || cl.logRequests;
            config->watchConfig = config->watchConfig || cl.watchConfig;
        }
        return result;
    };
}

// --help, --version or a usage error: the exit code; nullopt to go on.
std::optional<int> answerWithoutConfig(const CommandLine &cl)
{
    switch (cl.action) {
    case CommandLine::Action::UsageError:
        std::fprintf(stderr, "slp: %s\n\n%s", qPrintable(cl.error), qPrintable(usageText()));
        return 2;
    case CommandLine::Action::Help:
        std::fputs(qPrintable(usageText()), stdout);
        return 0;
    case CommandLine::Action::Version:
        std::printf("slp %s\n", SLP_VERSION);
        return 0;
    case CommandLine::Action::Check:
    case CommandLine::Action::HealthCheck:
    case CommandLine::Action::Serve:
        break;
    }
    return std::nullopt;
}

int printCheck(const Config &config)
{
    for (const QString &line : routeDump(config))
        std::printf("%s\n", qPrintable(line));
    std::printf("upstream_transport: %s\n", qPrintable(config.upstreamTransport));
    std::printf("config ok: %lld routes\n", static_cast<long long>(config.routes.size()));
    return 0;
}

int unhealthy(const QString &why)
{
    std::fprintf(stderr, "slp: health check failed: %s\n", qPrintable(why));
    return 1;
}

// The address --health-check asks: --listen, else the config's listen: (the config compiled
// in full, as --check does, so a config slp would refuse fails the check too).
std::optional<ListenAddress> healthListen(const CommandLine &cl, QString *why)
{
    if (cl.configPath.isEmpty()) {
        const auto listen = parseListenAddress(cl.listen, why);
        if (!listen)
            *why = QStringLiteral("--listen %1: %2").arg(cl.listen, *why);
        return listen;
    }
    std::optional<ConfigResult> parsed = loadWithinDeadline(loaderFor(cl));
    if (!parsed) {
        std::fprintf(stderr, "slp: health check failed: config error: %s\n",
                     qPrintable(yamlDeadlineMessage(cl.configPath)));
        std::fflush(stderr);
        std::_Exit(1); // the parse still runs on its thread
    }
    if (const auto *errors = std::get_if<QList<ConfigError>>(&*parsed)) {
        *why = QStringLiteral("config error: ") + errors->constFirst().toString();
        if (errors->size() > 1)
            *why += QStringLiteral(" (and %1 more: slp --check)").arg(errors->size() - 1);
        return std::nullopt;
    }
    return std::get<Config>(*parsed).listen;
}

// One GET /healthz, bounded by HealthCheck::kDefaultBound; the event loop runs only for it.
int runHealthCheck(const CommandLine &cl)
{
    QString why;
    const std::optional<ListenAddress> listen = healthListen(cl, &why);
    if (!listen)
        return unhealthy(why);
    const std::optional<HealthTarget> target = healthTargetFor(*listen, &why);
    if (!target)
        return unhealthy(why);
    HealthCheck check(*target, HealthCheck::kDefaultBound);
    QObject::connect(&check, &HealthCheck::finished, [&](bool healthy, const QString &message) {
        if (healthy)
            std::printf("slp: healthy: %s answered /healthz with %s\n", qPrintable(target->text()),
                        qPrintable(message));
        else
            unhealthy(QStringLiteral("%1: %2").arg(target->text(), message));
        QCoreApplication::exit(healthy ? 0 : 1);
    });
    // Started from the loop: a refusal reported at once must find the loop running to end it.
    QTimer::singleShot(0, &check, &HealthCheck::start);
    return QCoreApplication::exec();
}

// Each proxied stream holds two descriptors (client and upstream): the default soft limit
// of 1024 would refuse connections at about 500 streams. Take the hard limit.
void raiseFileLimit()
{
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &files);
    }
}
} // namespace

int main(int argc, char *argv[])
{
    // Before the application exists: its thread's dispatcher is made with it.
    if (QAbstractEventDispatcher *dispatcher = createEventDispatcher())
        QCoreApplication::setEventDispatcher(dispatcher); // owned by Qt from here
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("slp"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SLP_VERSION));

    const CommandLine cl = parseCommandLine(app.arguments().mid(1));
    if (const std::optional<int> code = answerWithoutConfig(cl))
        return *code;
    if (cl.action == CommandLine::Action::HealthCheck)
        return runHealthCheck(cl);
    const Daemon::ConfigLoader load = loaderFor(cl);
    // Bounded: yaml-cpp 0.7 can hang on a malformed file (yamldeadline.h).
    std::optional<ConfigResult> parsed = loadWithinDeadline(load);
    if (!parsed) {
        std::fprintf(stderr, "%s\nslp: 1 config error; nothing was started\n",
                     qPrintable(yamlDeadlineMessage(cl.configPath)));
        std::fflush(stderr);
        std::_Exit(1);
    }
    ConfigResult result = std::move(*parsed);
    if (auto *errors = std::get_if<QList<ConfigError>>(&result))
        return printErrors(*errors);
    Config config = std::get<Config>(std::move(result));
    if (cl.action == CommandLine::Action::Check)
        return printCheck(config);

    installLogHandler();
    raiseFileLimit();
    keepLargeBuffersOnTheHeap(config.upstreamTransport);
    Daemon daemon(std::move(config), cl.configPath, load);
    QObject::connect(&daemon, &Daemon::finished, &app, &QCoreApplication::exit);
    QString error;
    if (!daemon.start(&error)) {
        std::fprintf(stderr, "slp: %s\n", qPrintable(error));
        return 1;
    }
    return app.exec();
}
