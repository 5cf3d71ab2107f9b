// SPDX-License-Identifier: GPL-3.0-or-later
#include "nodeclients.h"

#include "command.h"

#include <QFile>

namespace slp::test {

QString nodeProgram()
{
    const QString named = qEnvironmentVariable("SLP_NODE");
    return named.isEmpty() ? QStringLiteral("node") : named;
}

QString nodeScript(const QString &name)
{
    return qEnvironmentVariable("SLP_NODE_DIR") + QLatin1Char('/') + name;
}

QString nodePackageMissing(const QString &package)
{
    if (QFile::exists(nodeScript(QStringLiteral("node_modules/%1/package.json").arg(package))))
        return {};
    return QStringLiteral("the %1 npm package is missing: run scripts/install-deps.sh test "
                          "(npm install in tests/node)")
        .arg(package);
}

QString nodeSkipReason()
{
    if (qEnvironmentVariableIsEmpty("SLP_NODE"))
        return {};
    const CommandResult run = runCommand(nodeProgram(), {QStringLiteral("--version")}, 30000);
    if (run.exitCode == 77)
        return QString::fromUtf8(run.stdErr).trimmed();
    return {};
}

} // namespace slp::test
