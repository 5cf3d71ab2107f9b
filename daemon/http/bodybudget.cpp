// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/bodybudget.h"

#include "observe/metrics.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace slp {

BodyBudget::BodyBudget(qint64 limit) : m_limit(limit)
{}

qint64 BodyBudget::defaultLimit()
{
    constexpr qint64 kOneGiB = 1ll << 30;
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0)
        return kOneGiB;
    return std::min(kOneGiB, qint64(pages) * pageSize / 4);
}

void BodyBudget::setLimit(qint64 limit)
{
    std::lock_guard lock(m_mutex);
    m_limit = limit;
    admitLocked();
}

qint64 BodyBudget::limit() const
{
    std::lock_guard lock(m_mutex);
    return m_limit;
}

qint64 BodyBudget::used() const
{
    std::lock_guard lock(m_mutex);
    return m_used;
}

void BodyBudget::setMetrics(MetricsRegistry *metrics)
{
    std::lock_guard lock(m_mutex);
    m_metrics = metrics;
    if (m_metrics)
        m_metrics->add(metric::bodyReadsPaused, {}, 0); // the series exists from the start
    publishLocked();
}

void BodyBudget::returnFreedMemorySoon()
{
#ifdef __GLIBC__
    static std::atomic<bool> pending{false};
    if (pending.exchange(true))
        return;
    // A second later: the exchange that held the body is deleted by then, and a burst of
    // large bodies trims once a second rather than once a body.
    std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        pending = false;
        malloc_trim(0);
    }).detach();
#endif
}

std::unique_ptr<BodyBudget::Lease> BodyBudget::tryAcquire(qint64 bytes, QObject *context,
                                                          Granted granted)
{
    std::lock_guard lock(m_mutex);
    if (m_waiting.empty() && m_used + bytes <= m_limit) {
        m_used += bytes;
        publishLocked();
        return std::make_unique<Lease>(*this, bytes);
    }
    m_waiting.push_back({bytes, context, std::move(granted)});
    if (m_metrics)
        m_metrics->add(metric::bodyReadsPaused, {});
    return nullptr;
}

void BodyBudget::cancel(QObject *context)
{
    std::lock_guard lock(m_mutex);
    std::erase_if(m_waiting, [context](const Waiter &w) { return w.context == context; });
    admitLocked(); // the one that left may have held the line up
}

void BodyBudget::release(qint64 bytes)
{
    std::lock_guard lock(m_mutex);
    m_used -= bytes;
    admitLocked();
    publishLocked();
}

void BodyBudget::admitLocked()
{
    // Strictly in order: a large body at the head of the line is not overtaken by small
    // ones, or it could wait forever.
    while (!m_waiting.empty() && m_used + m_waiting.front().bytes <= m_limit) {
        Waiter w = std::move(m_waiting.front());
        m_waiting.pop_front();
        m_used += w.bytes;
        // Posted under the lock, so the context cannot be destroyed in between (it cancels
        // first); the grant reaches it on its own thread.
        auto lease =
            std::make_shared<std::unique_ptr<Lease>>(std::make_unique<Lease>(*this, w.bytes));
        QMetaObject::invokeMethod(
            w.context, [lease, granted = std::move(w.granted)] { granted(std::move(*lease)); },
            Qt::QueuedConnection);
    }
}

void BodyBudget::publishLocked()
{
    if (m_metrics)
        m_metrics->set(metric::bufferedBodyBytes, {}, double(m_used));
}

} // namespace slp
