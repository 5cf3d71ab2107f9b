// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>

#include <atomic>

namespace slp {

// `max_connections` for the whole process: every worker's listener takes a place before it
// adopts a connection and gives it back when the connection closes. A listener that finds no
// place holds the connection unread and stops accepting; `released` wakes it (queued, on its
// own thread) when a place frees up anywhere.
class ConnectionBudget : public QObject
{
    Q_OBJECT
public:
    explicit ConnectionBudget(int max, QObject *parent = nullptr) : QObject(parent), m_max(max) {}

    // Thread-safe.
    bool tryAcquire();
    void release();
    bool hasRoom() const { return m_used.load(std::memory_order_relaxed) < m_max; }

Q_SIGNALS:
    // A place freed up while the budget was full: listeners holding connections try again.
    void released();

private:
    const int m_max;
    std::atomic<int> m_used{0};
};

} // namespace slp
