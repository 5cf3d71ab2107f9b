// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace slp::test {

// Wedges one thread of a child process as a stuck event loop would be, the rest running on:
// ptrace(PTRACE_SEIZE) and PTRACE_INTERRUPT stop that thread alone (a SIGSTOP would stop the
// whole process). thaw() or the destructor lets it go. Needs ptrace rights over the child
// (root, or the child's parent with Yama's ptrace_scope 1 or less).
class ThreadFreezer
{
public:
    ThreadFreezer() = default;
    ~ThreadFreezer();
    ThreadFreezer(const ThreadFreezer &) = delete;
    ThreadFreezer &operator=(const ThreadFreezer &) = delete;

    // The thread of process `pid` whose name (comm) is `threadName`.
    bool freeze(qint64 pid, const QString &threadName, QString *error);
    void thaw();
    bool frozen() const { return m_tid > 0; }

private:
    qint64 m_tid = 0;
};

} // namespace slp::test
