// SPDX-License-Identifier: GPL-3.0-or-later
#include "childprocess.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QFile>
#include <QProcessEnvironment>
#include <QTimer>

#include <csignal>

namespace slp::test {

void pumpEvents(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(std::max(0, ms), &loop, &QEventLoop::quit);
    loop.exec();
}

ChildProcess::ChildProcess() = default;

ChildProcess::~ChildProcess()
{
    stop();
}

bool ChildProcess::start(const QString &program, const QStringList &args,
                         const QMap<QString, QString> &envExtras, const QString &workingDir)
{
    stop();
    m_error.clear();
    m_program = program;
    m_dir = std::make_unique<QTemporaryDir>();
    if (!m_dir->isValid()) {
        m_error = QStringLiteral("cannot create a temporary directory");
        return false;
    }
    m_out = Stream();
    m_out.path = m_dir->filePath("stdout.log");
    m_err = Stream();
    m_err.path = m_dir->filePath("stderr.log");

    m_process = std::make_unique<QProcess>();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (auto it = envExtras.cbegin(); it != envExtras.cend(); ++it)
        env.insert(it.key(), it.value());
    m_process->setProcessEnvironment(env);
    m_process->setStandardInputFile(QProcess::nullDevice());
    m_process->setStandardOutputFile(m_out.path);
    m_process->setStandardErrorFile(m_err.path);
    if (!workingDir.isEmpty())
        m_process->setWorkingDirectory(workingDir);
    m_process->start(program, args);
    if (!m_process->waitForStarted(10000)) {
        m_error = QStringLiteral("cannot start %1: %2").arg(program, m_process->errorString());
        m_process.reset();
        return false;
    }
    return true;
}

bool ChildProcess::isRunning() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

qint64 ChildProcess::pid() const
{
    return m_process ? m_process->processId() : 0;
}

void ChildProcess::refreshStream(Stream &s)
{
    if (s.path.isEmpty())
        return;
    QFile f(s.path);
    if (!f.open(QIODevice::ReadOnly))
        return;
    if (!f.seek(s.offset))
        return;
    const QByteArray fresh = f.readAll();
    if (fresh.isEmpty())
        return;
    s.offset += fresh.size();
    s.data += fresh;
    s.partial += fresh;
    qsizetype nl;
    while ((nl = s.partial.indexOf('\n')) >= 0) {
        QByteArray line = s.partial.left(nl);
        if (line.endsWith('\r'))
            line.chop(1);
        s.lines << QString::fromUtf8(line);
        s.partial.remove(0, nl + 1);
    }
}

void ChildProcess::refresh()
{
    refreshStream(m_out);
    refreshStream(m_err);
}

ChildProcess::Mark ChildProcess::mark()
{
    refresh();
    return {m_out.lines.size(), m_err.lines.size()};
}

QStringList ChildProcess::lines(Channel channel, Mark from)
{
    refresh();
    QStringList out;
    if (channel != Channel::StdErr)
        out += m_out.lines.mid(from.stdoutLines);
    if (channel != Channel::StdOut)
        out += m_err.lines.mid(from.stderrLines);
    return out;
}

int ChildProcess::countLines(const QRegularExpression &re, Channel channel, Mark from)
{
    int n = 0;
    for (const QString &l : lines(channel, from))
        if (re.match(l).hasMatch())
            ++n;
    return n;
}

QRegularExpressionMatch ChildProcess::waitForLine(const QRegularExpression &re, int timeoutMs,
                                                  Channel channel, Mark from)
{
    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    for (;;) {
        // Exit state first: output written before exit is then surely in the files.
        const bool exited = !isRunning();
        refresh();
        auto search = [&](const QStringList &ls, qsizetype start) {
            for (qsizetype i = start; i < ls.size(); ++i) {
                QRegularExpressionMatch m = re.match(ls[i]);
                if (m.hasMatch())
                    return m;
            }
            return QRegularExpressionMatch();
        };
        if (channel != Channel::StdErr) {
            QRegularExpressionMatch m = search(m_out.lines, from.stdoutLines);
            if (m.hasMatch())
                return m;
        }
        if (channel != Channel::StdOut) {
            QRegularExpressionMatch m = search(m_err.lines, from.stderrLines);
            if (m.hasMatch())
                return m;
        }
        if (exited || deadline.hasExpired())
            return {};
        pumpEvents(static_cast<int>(std::min<qint64>(10, deadline.remainingTime())));
    }
}

QByteArray ChildProcess::stdoutBytes()
{
    refresh();
    return m_out.data;
}

QByteArray ChildProcess::stderrBytes()
{
    refresh();
    return m_err.data;
}

QString ChildProcess::allOutput()
{
    refresh();
    return QString::fromUtf8(m_out.data + m_err.data);
}

bool ChildProcess::sendSignal(int signal)
{
    if (!isRunning())
        return false;
    return ::kill(static_cast<pid_t>(m_process->processId()), signal) == 0;
}

bool ChildProcess::waitForExit(int timeoutMs)
{
    if (!m_process)
        return true;
    if (m_process->state() == QProcess::NotRunning)
        return true;
    return m_process->waitForFinished(std::max(1, timeoutMs));
}

int ChildProcess::exitCode() const
{
    if (!m_process || m_process->state() != QProcess::NotRunning ||
        m_process->exitStatus() != QProcess::NormalExit)
        return -1;
    return m_process->exitCode();
}

bool ChildProcess::crashed() const
{
    return m_process && m_process->state() == QProcess::NotRunning &&
           m_process->exitStatus() == QProcess::CrashExit;
}

int ChildProcess::stop(int timeoutMs)
{
    if (!m_process)
        return -1;
    if (m_process->state() != QProcess::NotRunning) {
        m_process->terminate();
        if (!m_process->waitForFinished(std::max(1, timeoutMs))) {
            m_process->kill();
            m_process->waitForFinished(5000);
        }
    }
    refresh();
    return exitCode();
}

} // namespace slp::test
