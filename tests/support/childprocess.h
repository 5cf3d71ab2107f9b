// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace slp::test {

// Runs the calling thread's event loop for up to ms (so sockets, processes and timers of the
// test itself keep working while it waits).
void pumpEvents(int ms);

// A position in a child's output; waits given a mark only look at lines after it.
struct OutputMark
{
    qsizetype stdoutLines = 0;
    qsizetype stderrLines = 0;
};

// A child program whose stdout and stderr go to files, not pipes: a chatty child can never
// block on a full pipe while the test is busy elsewhere, and nothing it wrote is lost.
// Every wait is bounded; the destructor stops the child.
class ChildProcess
{
public:
    enum class Channel
    {
        StdOut,
        StdErr,
        Both
    };
    using Mark = OutputMark;

    ChildProcess();
    ~ChildProcess();
    ChildProcess(const ChildProcess &) = delete;
    ChildProcess &operator=(const ChildProcess &) = delete;

    // envExtras are added to (or override) the test's own environment.
    bool start(const QString &program, const QStringList &args,
               const QMap<QString, QString> &envExtras = {}, const QString &workingDir = {});
    QString errorString() const { return m_error; }
    bool isRunning() const;
    qint64 pid() const;
    QString program() const { return m_program; }

    // First line (complete, without its newline) matching re, at or after `from`; waits up to
    // timeoutMs; returns early with no match once the child has exited and all is read.
    QRegularExpressionMatch waitForLine(const QRegularExpression &re, int timeoutMs,
                                        Channel channel = Channel::Both, Mark from = {});
    Mark mark();
    QStringList lines(Channel channel = Channel::Both, Mark from = {});
    int countLines(const QRegularExpression &re, Channel channel = Channel::Both, Mark from = {});

    QByteArray stdoutBytes();
    QByteArray stderrBytes();
    QString allOutput(); // stdout, then stderr

    bool sendSignal(int signal);
    // true once exited (within timeoutMs).
    bool waitForExit(int timeoutMs);
    int exitCode() const;
    bool crashed() const; // killed by a signal
    // SIGTERM, wait up to timeoutMs, then SIGKILL. Returns the exit code (-1 if killed/never run).
    int stop(int timeoutMs = 5000);

private:
    struct Stream
    {
        QString path;
        qint64 offset = 0;
        QByteArray data;
        QByteArray partial;
        QStringList lines;
    };
    void refresh();
    static void refreshStream(Stream &s);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QProcess> m_process;
    Stream m_out;
    Stream m_err;
    QString m_program;
    QString m_error;
};

} // namespace slp::test
