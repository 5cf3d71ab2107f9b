// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>

#include <atomic>

namespace slp {

// How many ForwardExchanges are alive, across every worker thread: what a drain waits for.
// Exchanges add and remove themselves on their own threads; drained() reaches the owner's
// thread queued, and the owner checks count() again (a request may have started meanwhile).
class ExchangeCounter : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    void add() { m_count.fetch_add(1, std::memory_order_relaxed); }
    void remove()
    {
        if (m_count.fetch_sub(1, std::memory_order_acq_rel) == 1)
            Q_EMIT drained();
    }
    int count() const { return m_count.load(std::memory_order_acquire); }

Q_SIGNALS:
    void drained();

private:
    std::atomic_int m_count{0};
};

} // namespace slp
