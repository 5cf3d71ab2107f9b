// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace slp {

struct ForwardPlan;

// The log lines of one forwarded request, each in the one shape operators grep for; every
// line starts with SLP's own `[slpq...] ` id and ends with the client's id when it sent one.
class RequestLog
{
public:
    explicit RequestLog(const ForwardPlan &plan) : m_plan(plan) {}

    // `peer`: " (ADDR:PORT)" where the transport knows the address, else empty.
    void attemptFailed(int attempt, bool timedOut, const QString &peer,
                       const QString &detail) const;
    void brokeOff(qint64 bytesDown, const QString &peer, const QString &detail) const;
    void aggregateFailed(const QString &reason, const QByteArray &upstreamId) const;
    void streamIdle(qint64 upstreamBytes) const;
    // The transport cannot carry the request as sent (nothing went upstream).
    void refused(const QString &detail) const;
    // With log_requests only.
    void completed(int status, qint64 latencyNs, qint64 bytesDown,
                   const QByteArray &upstreamId) const;
    void clientGone() const;

private:
    QString upstreamUrl() const;
    QString id() const;
    QString clientForLog() const; // ` client="..."`, or empty

    const ForwardPlan &m_plan; // the exchange's, which outlives this
};

} // namespace slp
