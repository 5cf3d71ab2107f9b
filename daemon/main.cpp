#include "commandline.h"
#include "config/config.h"
#include "observe/logging.h"
#include "server/daemon.h"

#include <QCoreApplication>
#include <QTimer>

#include <cstdio>

using namespace slp;

namespace {
int printErrors(const QList<ConfigError> &errors)
{
    for (const ConfigError &e : errors) {
        std::fprintf(stderr, "%s\n", qPrintable(e.toString()));
    }
    std::fprintf(stderr, "slp: %lld config error%s; nothing was started\n",
                 static_cast<long long>(errors.size()), errors.size() == 1 ? "" : "s");
    return 1;
}
} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("slp"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SLP_VERSION));

    const CommandLine cl = parseCommandLine(app.arguments().mid(1));
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
    case CommandLine::Action::Serve:
        break;
    }

    // Loads and compiles the file with the command line's overrides; used again on SIGHUP.
    const auto load = [cl]() -> ConfigResult {
        ConfigResult result = loadConfigFile(cl.configPath);
        if (auto *config = std::get_if<Config>(&result)) {
            if (!cl.listen.isEmpty()) {
                QString error;
                const auto listen = parseListenAddress(cl.listen, &error);
                if (!listen) {
                    return QList<ConfigError>{
                        {QString(), 0, 0, QStringLiteral("--listen %1: %2").arg(cl.listen, error),
                         QStringLiteral("use :PORT, HOST:PORT or [IPv6]:PORT")}};
                }
                config->listen = *listen;
            }
            config->logRequests = config->logRequests || cl.logRequests;
        }
        return result;
    };
    ConfigResult result = load();
    if (auto *errors = std::get_if<QList<ConfigError>>(&result)) {
        return printErrors(*errors);
    }
    Config config = std::get<Config>(std::move(result));

    if (cl.action == CommandLine::Action::Check) {
        int width = 0;
        for (const Route &r : config.routes) {
            width = std::max(width, int(r.id.size()));
        }
        for (qsizetype i = 0; i < config.routes.size(); ++i) {
            std::printf("%s\n", qPrintable(routeDumpLine(config, int(i), width)));
        }
        std::printf("config ok: %lld routes\n", static_cast<long long>(config.routes.size()));
        return 0;
    }

    installLogHandler();
    Daemon daemon(std::move(config), cl.configPath, load);
    QObject::connect(&daemon, &Daemon::finished, &app, &QCoreApplication::exit);
    QString error;
    if (!daemon.start(&error)) {
        std::fprintf(stderr, "slp: %s\n", qPrintable(error));
        return 1;
    }
    return app.exec();
}
