// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

namespace slp::test {

struct CommandResult
{
    int exitCode = -1; // -1 when it did not exit normally
    bool started = false;
    bool timedOut = false; // killed after timeoutMs
    bool crashed = false;  // ended by a signal
    QByteArray stdOut;
    QByteArray stdErr;
    qint64 elapsedMs = 0;
    QString error;
};

// Runs program to completion (or kills it after timeoutMs) while the test's event loop keeps
// running; stdout/stderr are captured in full.
CommandResult runCommand(const QString &program, const QStringList &args, int timeoutMs = 30000,
                         const QByteArray &stdinBytes = {},
                         const QMap<QString, QString> &envExtras = {});

} // namespace slp::test
