// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>
#include <QtGlobal>

namespace slp {

struct ExchangeContext;
struct ForwardPlan;

// The log lines of one forwarded request, each in the one shape operators grep for:
//   [slpq...] WHAT upstream=ID model="MODEL" client="ID" trace=TRACEID
// SLP's id first; then, once the upstream answered, its X-Request-Id (the one the client got);
// the model id always; the client's own id and the W3C trace id when the request carried them.
// write() is the one place that frames a line. Every value from outside is escaped and
// bounded (quoteForLog), so no control byte reaches the log and no field is unbounded.
class RequestLog
{
public:
    // With `context`'s log policy (log_requests), read at each line.
    RequestLog(const ForwardPlan &plan, const ExchangeContext &context)
        : m_plan(plan), m_context(context)
    {}

    // The upstream answered: its id goes into every later line.
    void setUpstreamId(const QByteArray &id) { m_upstreamId = id; }

    // `peer`: " (ADDR:PORT)" where the transport knows the address, else empty.
    void attemptFailed(int attempt, bool timedOut, const QString &peer,
                       const QString &detail) const;
    void brokeOff(qint64 bytesDown, const QString &peer, const QString &detail) const;
    void aggregateFailed(const QString &reason) const;
    void streamIdle(qint64 upstreamBytes) const;
    // The transport cannot carry the request as sent (nothing went upstream).
    void refused(const QString &detail) const;
    // With log_requests only.
    void completed(int status, qint64 latencyNs, qint64 bytesDown) const;
    void clientGone() const;
    // A WebSocket tunnel closed: the bytes each way and how long it was open. With
    // log_requests, or always when it did not close cleanly (`clean`).
    void tunnelClosed(qint64 bytesUp, qint64 bytesDown, qint64 openMs, const QString &how,
                      bool clean) const;

private:
    void write(QtMsgType type, const QString &what) const;
    QString methodAndUrl() const; // POST "http://host:port/v1/...", the URL quoted

    const ForwardPlan &m_plan; // the exchange's, which outlives this
    const ExchangeContext &m_context;
    QByteArray m_upstreamId;
};

} // namespace slp
