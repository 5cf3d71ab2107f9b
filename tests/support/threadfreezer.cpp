// SPDX-License-Identifier: GPL-3.0-or-later
#include "threadfreezer.h"

#include <QDir>
#include <QFile>

#include <cerrno>
#include <cstring>
#include <sys/ptrace.h>
#include <sys/wait.h>

namespace slp::test {

ThreadFreezer::~ThreadFreezer()
{
    thaw();
}

bool ThreadFreezer::freeze(qint64 pid, const QString &threadName, QString *error)
{
    const QString taskDir = QStringLiteral("/proc/%1/task").arg(pid);
    qint64 tid = 0;
    for (const QString &task : QDir(taskDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile comm(taskDir + QLatin1Char('/') + task + QStringLiteral("/comm"));
        if (comm.open(QIODevice::ReadOnly) && comm.readAll().trimmed() == threadName.toUtf8())
            tid = task.toLongLong();
    }
    if (tid == 0) {
        *error = QStringLiteral("process %1 has no thread named %2").arg(pid).arg(threadName);
        return false;
    }
    if (::ptrace(PTRACE_SEIZE, pid_t(tid), nullptr, nullptr) != 0 ||
        ::ptrace(PTRACE_INTERRUPT, pid_t(tid), nullptr, nullptr) != 0) {
        *error = QStringLiteral("ptrace: %1").arg(QString::fromLocal8Bit(strerror(errno)));
        return false;
    }
    int status = 0;
    if (::waitpid(pid_t(tid), &status, __WALL) != pid_t(tid) || !WIFSTOPPED(status)) {
        *error = QStringLiteral("thread %1 did not stop").arg(tid);
        ::ptrace(PTRACE_DETACH, pid_t(tid), nullptr, nullptr);
        return false;
    }
    m_tid = tid;
    return true;
}

void ThreadFreezer::thaw()
{
    if (m_tid > 0)
        ::ptrace(PTRACE_DETACH, pid_t(m_tid), nullptr, nullptr);
    m_tid = 0;
}

} // namespace slp::test
