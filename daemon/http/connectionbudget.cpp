// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/connectionbudget.h"

namespace slp {

bool ConnectionBudget::tryAcquire()
{
    int used = m_used.load(std::memory_order_relaxed);
    while (used < m_max)
        if (m_used.compare_exchange_weak(used, used + 1, std::memory_order_acq_rel))
            return true;
    return false;
}

void ConnectionBudget::release()
{
    // Only a release from full can have left a listener waiting: one that failed to acquire
    // did so against a full budget, and the release that ends that state wakes it. A listener
    // that loses the place again to another waits for the next release from full.
    if (m_used.fetch_sub(1, std::memory_order_acq_rel) == m_max)
        Q_EMIT released();
}

} // namespace slp
