// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/forwardplan.h"
#include "http/responsewriter.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace slp {

class ExchangeRecord;

class SseAggregator;

// The aggregate side of an exchange, beside the relay: an upstream event stream reassembled
// into the one JSON answer the client asked for, or the 502 that stands in for it. Nothing
// reaches the client before the stream is decided; the exchange feeds it and writes what it
// builds.
class AggregateAnswer
{
public:
    // `maxAnswerBytes`: max_body_bytes; a longer reassembled answer is a 502 that says so.
    AggregateAnswer(ForwardPlan::Aggregate kind, HeaderList upstreamHeaders, qint64 maxAnswerBytes);
    ~AggregateAnswer();

    // Reads everything `call` has while the stream is undecided (as fast as the upstream sends:
    // memory grows with the generated output only). Returns the bytes read.
    qint64 read(UpstreamCall &call);
    // An in-band error or garbage decides before the upstream ends.
    bool decided() const;
    // The upstream's body ended: cleanly (the stream must be complete now) or not.
    void endOfInput(bool clean);
    bool succeeded() const;

    // On success: the client's head (the upstream's, less what described the stream, with the
    // exchange's X-Request-Id) and body.
    ResponseHead head(const ExchangeRecord &record) const;
    QByteArray body() const;
    // On failure: the 502 body, and why for the log (empty: said elsewhere).
    QByteArray failureBody(const QByteArray &requestId) const;
    QString failureReason(const UpstreamCall &call) const;
    // On failure: a short sentence for the route's last failure, never an address.
    QString failureWhat() const;
    // A stalled stream (stream_idle_timeout): the 502 body.
    static QByteArray stalledBody(const QByteArray &requestId);

private:
    std::unique_ptr<SseAggregator> m_aggregator;
    HeaderList m_upstreamHeaders; // the upstream's head, held until the end
    bool m_lost = false;          // the upstream's body did not end cleanly
    qint64 m_maxAnswerBytes;
};

} // namespace slp
