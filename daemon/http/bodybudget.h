// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace slp {

class MetricsRegistry;

// `max_buffered_body_bytes` for the whole process: every request body SLP holds in memory
// takes its bytes from here before it is read, and gives them back when its response is
// done. A body that does not fit is not refused: its connection stops reading (TCP holds the
// client back) and waits in line; as bytes come back, the waiting bodies are let in, in the
// order they asked, on their own threads. Thread-safe: one budget serves every worker.
class BodyBudget
{
public:
    // What a granted body holds: its bytes go back when the lease is destroyed.
    class Lease
    {
    public:
        Lease(BodyBudget &budget, qint64 bytes) : m_budget(budget), m_bytes(bytes) {}
        ~Lease() { m_budget.release(m_bytes); }
        Lease(const Lease &) = delete;
        Lease &operator=(const Lease &) = delete;
        qint64 bytes() const { return m_bytes; }

    private:
        BodyBudget &m_budget;
        qint64 m_bytes;
    };
    using Granted = std::function<void(std::unique_ptr<Lease>)>;

    explicit BodyBudget(qint64 limit = defaultLimit());

    // 1 GiB, or a quarter of the machine's memory where that is less.
    static qint64 defaultLimit();

    void setLimit(qint64 limit);
    qint64 limit() const;
    qint64 used() const;
    // The gauge slp_buffered_body_bytes and the counter slp_body_reads_paused_total.
    void setMetrics(MetricsRegistry *metrics);

    // `bytes` now, when they fit and nobody waits before them; otherwise nullptr, and
    // `granted` runs later on `context`'s thread with the lease. A context that waits must
    // call cancel() before it is destroyed; a grant already on its way is then dropped with
    // the object's posted events, and its bytes come back.
    std::unique_ptr<Lease> tryAcquire(qint64 bytes, QObject *context, Granted granted);
    void cancel(QObject *context);

    // After a large body is freed: hands free heap pages back to the system a second later
    // (once per second at most, off the event loop). glibc keeps them otherwise: SLP raises
    // its trim threshold so that back-to-back large bodies reuse them (docs/DECISIONS.md).
    static void returnFreedMemorySoon();
    static constexpr qint64 kLargeBody = 1024 * 1024;

private:
    struct Waiter
    {
        qint64 bytes;
        QObject *context; // lives until cancel(): see tryAcquire()
        Granted granted;
    };

    void release(qint64 bytes);
    // Lets in the waiters that fit now, in order.
    void admitLocked();
    void publishLocked();

    // Recursive: a grant posted to a context that is already gone may be dropped, and its
    // lease released, on this very call.
    mutable std::recursive_mutex m_mutex;
    qint64 m_limit;
    qint64 m_used = 0;
    std::deque<Waiter> m_waiting;
    MetricsRegistry *m_metrics = nullptr;
};

} // namespace slp
