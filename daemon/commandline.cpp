#include "commandline.h"

namespace slp {

QString usageText()
{
    return QStringLiteral(
        "usage: slp --config FILE [--listen ADDR] [--log-requests]\n"
        "       slp --check --config FILE\n"
        "       slp --version | --help\n"
        "\n"
        "SLP, the Simple LLM Proxy: one OpenAI-compatible endpoint in front of several\n"
        "OpenAI-compatible backends, routed by the request's \"model\" field.\n"
        "\n"
        "  --config FILE     the YAML config (backends, editions, limits)\n"
        "  --check           compile the config, print the route table, exit (contacts nothing)\n"
        "  --listen ADDR     override listen: (\":8080\", \"127.0.0.1:8080\", \"[::1]:8080\")\n"
        "  --log-requests    log every forwarded request for this run\n"
        "  --version         print the version\n"
        "  -h, --help        print this help\n"
        "\n"
        "Signals: SIGTERM/SIGINT drain and exit; SIGHUP reloads the config.\n");
}

CommandLine parseCommandLine(const QStringList &arguments)
{
    CommandLine cl;
    bool check = false;
    bool version = false;
    bool help = false;
    const auto fail = [&cl](const QString &error) {
        cl.action = CommandLine::Action::UsageError;
        cl.error = error;
        return cl;
    };
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        QString arg = arguments[i];
        QString value;
        bool hasInlineValue = false;
        if (arg.startsWith(QLatin1String("--")) && arg.contains(QLatin1Char('='))) {
            value = arg.section(QLatin1Char('='), 1);
            arg = arg.section(QLatin1Char('='), 0, 0);
            hasInlineValue = true;
        }
        const auto takeValue = [&](QString *out) {
            if (hasInlineValue) {
                *out = value;
                return !value.isEmpty();
            }
            if (i + 1 >= arguments.size() || arguments[i + 1].startsWith(QLatin1String("--"))) {
                return false;
            }
            *out = arguments[++i];
            return true;
        };
        if (arg == QLatin1String("--config")) {
            if (!takeValue(&cl.configPath)) {
                return fail(QStringLiteral("--config needs a file name"));
            }
        } else if (arg == QLatin1String("--listen")) {
            if (!takeValue(&cl.listen)) {
                return fail(QStringLiteral("--listen needs an address such as 127.0.0.1:8080"));
            }
        } else if (hasInlineValue) {
            return fail(QStringLiteral("%1 takes no value").arg(arg));
        } else if (arg == QLatin1String("--check")) {
            check = true;
        } else if (arg == QLatin1String("--log-requests")) {
            cl.logRequests = true;
        } else if (arg == QLatin1String("--version")) {
            version = true;
        } else if (arg == QLatin1String("--help") || arg == QLatin1String("-h")) {
            help = true;
        } else if (arg.startsWith(QLatin1Char('-'))) {
            return fail(QStringLiteral("unknown flag %1").arg(arg));
        } else {
            static const QStringList known = {QStringLiteral("config"), QStringLiteral("check"),
                                              QStringLiteral("listen"), QStringLiteral("version"),
                                              QStringLiteral("help")};
            const QString hint =
                known.contains(arg) ? QStringLiteral(" (did you mean --%1?)").arg(arg) : QString();
            return fail(QStringLiteral("unexpected argument \"%1\": slp takes flags only%2")
                            .arg(arg, hint));
        }
    }
    if (help) {
        cl.action = CommandLine::Action::Help;
        return cl;
    }
    if (version) {
        cl.action = CommandLine::Action::Version;
        return cl;
    }
    if (cl.configPath.isEmpty()) {
        return fail(QStringLiteral("--config FILE is required"));
    }
    cl.action = check ? CommandLine::Action::Check : CommandLine::Action::Serve;
    return cl;
}

} // namespace slp
