// SPDX-License-Identifier: GPL-3.0-or-later
#include "command.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTimer>

namespace slp::test {

CommandResult runCommand(const QString &program, const QStringList &args, int timeoutMs,
                         const QByteArray &stdinBytes, const QMap<QString, QString> &envExtras)
{
    CommandResult r;
    QElapsedTimer clock;
    clock.start();
    QProcess proc;
    if (!envExtras.isEmpty()) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (auto it = envExtras.cbegin(); it != envExtras.cend(); ++it)
            env.insert(it.key(), it.value());
        proc.setProcessEnvironment(env);
    }
    // Drain both pipes as data comes so a verbose command never blocks on a full pipe.
    QObject::connect(
        &proc, &QProcess::readyReadStandardOutput, &proc,
        [&] { r.stdOut += proc.readAllStandardOutput(); });
    QObject::connect(&proc, &QProcess::readyReadStandardError, &proc,
                     [&] { r.stdErr += proc.readAllStandardError(); });
    QEventLoop loop;
    QObject::connect(&proc, &QProcess::finished, &loop, &QEventLoop::quit);
    QObject::connect(&proc, &QProcess::errorOccurred, &loop, [&](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            loop.quit();
    });
    proc.start(program, args);
    if (!proc.waitForStarted(10000)) {
        r.error = proc.errorString();
        r.elapsedMs = clock.elapsed();
        return r;
    }
    r.started = true;
    if (!stdinBytes.isEmpty())
        proc.write(stdinBytes);
    proc.closeWriteChannel();

    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    timer.start(std::max(1, timeoutMs));
    if (proc.state() != QProcess::NotRunning)
        loop.exec();
    if (proc.state() != QProcess::NotRunning) {
        r.timedOut = true;
        proc.kill();
        proc.waitForFinished(5000);
    }
    r.stdOut += proc.readAllStandardOutput();
    r.stdErr += proc.readAllStandardError();
    r.crashed = !r.timedOut && proc.exitStatus() == QProcess::CrashExit;
    r.exitCode = (r.timedOut || r.crashed) ? -1 : proc.exitCode();
    r.elapsedMs = clock.elapsed();
    return r;
}

} // namespace slp::test
