// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/commandline.h"

#include "strictargs.h"

namespace slp {

QString usageText()
{
    return QStringLiteral(
        "usage: slp --config FILE [--listen ADDR] [--log-requests] [--watch-config]\n"
        "       slp --check --config FILE\n"
        "       slp --health-check [--config FILE] [--listen ADDR]\n"
        "       slp --version | --help\n"
        "\n"
        "SLP, the Simple LLM Proxy: one OpenAI-compatible endpoint in front of several\n"
        "OpenAI-compatible backends, routed by the request's \"model\" field.\n"
        "\n"
        "  --config FILE     the YAML config (backends, editions, limits)\n"
        "  --check           compile the config, print the route table, exit (contacts nothing)\n"
        "  --health-check    GET /healthz where the config's listen: (or --listen) says slp\n"
        "                    serves (\":8080\" is asked on 127.0.0.1, \"[::]:8080\" on [::1]);\n"
        "                    exit 0 on a 200 within 3 s, else 1 and the reason\n"
        "  --listen ADDR     override listen: (\":8080\", \"127.0.0.1:8080\", \"[::1]:8080\",\n"
        "                    \"unix:/run/slp/slp.sock\")\n"
        "  --log-requests    log every forwarded request for this run\n"
        "  --watch-config    reload when the config file changes (as watch_config: true)\n"
        "  --version         print the version\n"
        "  -h, --help        print this help\n"
        "\n"
        "Signals: SIGTERM/SIGINT drain and exit; SIGHUP reloads the config.\n"
        "Under systemd: Type=notify (readiness, status, watchdog) and socket activation.\n");
}

namespace {
// --health-check asks where slp listens: the config's listen:, or --listen instead (which
// needs no config at all).
void healthCheckAction(const StrictArgs &args, CommandLine *cl)
{
    if (args.has(QStringLiteral("check")))
        cl->error = QStringLiteral("--check and --health-check: choose one");
    else if (cl->configPath.isEmpty() && cl->listen.isEmpty())
        cl->error = QStringLiteral("--health-check needs --config FILE or --listen ADDR");
    else
        cl->action = CommandLine::Action::HealthCheck;
}
} // namespace

CommandLine parseCommandLine(const QStringList &arguments)
{
    const StrictArgs args = parseStrictArgs(
        arguments,
        {{QStringLiteral("config"), true, QStringLiteral("a file name")},
         {QStringLiteral("listen"), true, QStringLiteral("an address such as 127.0.0.1:8080")},
         {QStringLiteral("check"), false, {}},
         {QStringLiteral("health-check"), false, {}},
         {QStringLiteral("log-requests"), false, {}},
         {QStringLiteral("watch-config"), false, {}},
         {QStringLiteral("version"), false, {}},
         {QStringLiteral("help"), false, {}}},
        QStringLiteral("slp"));
    CommandLine cl;
    if (!args.error.isEmpty()) {
        cl.error = args.error;
        return cl;
    }
    cl.configPath = args.values.value(QStringLiteral("config"));
    cl.listen = args.values.value(QStringLiteral("listen"));
    cl.logRequests = args.has(QStringLiteral("log-requests"));
    cl.watchConfig = args.has(QStringLiteral("watch-config"));
    if (args.has(QStringLiteral("help"))) {
        cl.action = CommandLine::Action::Help;
    } else if (args.has(QStringLiteral("version"))) {
        cl.action = CommandLine::Action::Version;
    } else if (args.has(QStringLiteral("health-check"))) {
        healthCheckAction(args, &cl);
    } else if (cl.configPath.isEmpty()) {
        cl.error = QStringLiteral("--config FILE is required");
    } else {
        cl.action = args.has(QStringLiteral("check")) ? CommandLine::Action::Check
                                                      : CommandLine::Action::Serve;
    }
    return cl;
}

} // namespace slp
