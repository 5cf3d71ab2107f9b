// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>

namespace slp {

// `slp` arguments. Strict on purpose: routers that took a stray word for a subcommand or a
// config path have started servers nobody asked for. Here `slp help` or a misspelt flag is a
// usage error and can never start a server.
struct CommandLine
{
    enum class Action
    {
        Serve,
        Check,
        HealthCheck, // GET /healthz where the config (or --listen) listens
        Version,
        Help,
        UsageError
    };
    Action action = Action::UsageError;
    QString configPath;
    QString listen; // --listen override, empty = use the config's
    bool logRequests = false;
    bool watchConfig = false; // --watch-config: as `watch_config: true`
    QString error;            // UsageError: what was wrong
};

CommandLine parseCommandLine(const QStringList &arguments); // arguments without argv[0]
QString usageText();

} // namespace slp
