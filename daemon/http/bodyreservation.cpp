// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/bodyreservation.h"

#include <algorithm>

namespace slp {

namespace {

// A dispatched request's body memory, held until its response is done (a Qt child of the
// response's writer): then the budget gets its bytes back, and a large body's freed pages go
// back to the system.
class HeldBody : public QObject
{
public:
    HeldBody(std::vector<std::unique_ptr<BodyBudget::Lease>> leases, qint64 bytes, QObject *parent)
        : QObject(parent), m_leases(std::move(leases)), m_bytes(bytes)
    {}
    ~HeldBody() override
    {
        if (m_bytes >= BodyBudget::kLargeBody)
            BodyBudget::returnFreedMemorySoon();
    }

private:
    std::vector<std::unique_ptr<BodyBudget::Lease>> m_leases;
    qint64 m_bytes;
};

} // namespace

BodyReservation::BodyReservation(BodyBudget &budget, QObject *context,
                                 std::function<void()> granted)
    : m_budget(budget), m_context(context), m_granted(std::move(granted))
{}

BodyReservation::~BodyReservation()
{
    stopWaiting();
    // A large body cut short (the client left mid-upload, or it was refused) frees its pages
    // here, not through a HeldBody: they go back to the system the same way.
    if (m_reserved >= BodyBudget::kLargeBody || m_largeReleased)
        BodyBudget::returnFreedMemorySoon();
}

BodyReservation::Answer BodyReservation::reserve(qint64 bytes)
{
    if (m_reserved + bytes > m_budget.limit())
        return Answer::TooLarge;
    auto lease =
        m_budget.tryAcquire(bytes, m_context, [this](std::unique_ptr<BodyBudget::Lease> l) {
            if (!m_waiting)
                return; // refused meanwhile: the lease goes back
            m_waiting = false;
            keep(std::move(l));
            m_granted();
        });
    if (!lease) {
        m_waiting = true;
        return Answer::Waiting;
    }
    keep(std::move(lease));
    return Answer::Granted;
}

BodyReservation::Answer BodyReservation::reserveChunked(qint64 decoded, qint64 incoming)
{
    const qint64 needed = decoded + incoming;
    if (needed <= m_reserved)
        return Answer::Granted;
    const qint64 room = m_budget.limit() - m_reserved;
    const qint64 step = std::max({needed - m_reserved, m_reserved, qint64(64 * 1024)});
    return reserve(needed - m_reserved > room ? needed - m_reserved : std::min(step, room));
}

void BodyReservation::stopWaiting()
{
    if (!std::exchange(m_waiting, false))
        return;
    m_budget.cancel(m_context);
}

void BodyReservation::handOver(QObject *response, qint64 bodyBytes)
{
    if (!m_leases.empty()) // a Qt child of the response, released with it
        new HeldBody(std::exchange(m_leases, {}), bodyBytes, response);
    m_reserved = 0;
}

void BodyReservation::release()
{
    stopWaiting();
    m_largeReleased = m_largeReleased || m_reserved >= BodyBudget::kLargeBody;
    m_leases.clear();
    m_reserved = 0;
}

void BodyReservation::keep(std::unique_ptr<BodyBudget::Lease> lease)
{
    m_reserved += lease->bytes();
    m_leases.push_back(std::move(lease));
}

} // namespace slp
