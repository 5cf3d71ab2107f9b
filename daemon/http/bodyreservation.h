// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/bodybudget.h"

#include <QObject>

#include <functional>
#include <memory>
#include <vector>

namespace slp {

// The memory one connection's current request body holds in max_buffered_body_bytes, from
// before its first byte is read until its response is done (nginx keeps a request's body,
// r->request_body, apart from the reading of its head). Bytes are reserved before they are
// read; a body that does not fit yet waits in the budget's line and is told on the
// connection's thread when its bytes come; a dispatched body's leases go with its response;
// a refused or abandoned body gives them back at once. A large body's freed pages go back to
// the system either way.
class BodyReservation
{
public:
    enum class Answer
    {
        Granted, // reserved: read on
        Waiting, // in the budget's line: the `granted` callback runs once they are reserved
        TooLarge // more than the whole budget: it could never fit
    };

    // `context`: the connection, on whose thread `granted` runs when a wait is over.
    BodyReservation(BodyBudget &budget, QObject *context, std::function<void()> granted);
    ~BodyReservation();
    BodyReservation(const BodyReservation &) = delete;
    BodyReservation &operator=(const BodyReservation &) = delete;

    qint64 limit() const { return m_budget.limit(); }
    // `bytes` more for the current body (a Content-Length body: all of it at once).
    Answer reserve(qint64 bytes);
    // Room for a chunked body, whose size is unknown until its end: what it decoded so far
    // and what this read may add, grown by doubling, never past the budget's limit.
    Answer reserveChunked(qint64 decoded, qint64 incoming);
    bool isWaiting() const { return m_waiting; }
    // Leaves the budget's line (a grant already on its way is dropped, its bytes returned).
    void stopWaiting();

    // The body was dispatched: its leases live as long as `response` (a Qt child of it), so
    // the budget gets its bytes back when the response is done.
    void handOver(QObject *response, qint64 bodyBytes);
    // The body was refused: its bytes go back now.
    void release();

private:
    void keep(std::unique_ptr<BodyBudget::Lease> lease);

    BodyBudget &m_budget;
    QObject *m_context;
    std::function<void()> m_granted;
    std::vector<std::unique_ptr<BodyBudget::Lease>> m_leases;
    qint64 m_reserved = 0;
    bool m_waiting = false;
    bool m_largeReleased = false; // a large body was refused: trim when the connection goes
};

} // namespace slp
