// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/outcome.h"
#include "forward/requestlog.h"
#include "upstream/upstreamtransport.h"

#include <QByteArray>
#include <QString>

namespace slp {

struct ExchangeContext;
struct ForwardPlan;
struct RouteForwarding;
class ResponseWriter;

// One exchange's record, filled in as it runs and ended in one place (Envoy's StreamInfo,
// which its HTTP connection manager and its TCP proxy both fill): a forwarded request and a
// WebSocket tunnel keep one each. For its life it holds the exchange's place in the drain
// count (and, for a request, in the in-flight gauges); it keeps the Outcome and the request's
// log lines; it does what every response head and every failed attempt need; and finish()
// records the ending: slp_requests_total and slp_responses_broken_total, the last log line,
// the route's health.
class ExchangeRecord
{
public:
    enum class InFlight
    {
        Counted,   // slp_inflight_requests and slp_route_inflight_requests
        NotCounted // a tunnel: slp_open_tunnels counts it once open
    };

    // `context` and `plan` outlive the record (the exchange holds all three).
    ExchangeRecord(const ExchangeContext &context, const ForwardPlan &plan, InFlight inFlight);
    ~ExchangeRecord();
    ExchangeRecord(const ExchangeRecord &) = delete;
    ExchangeRecord &operator=(const ExchangeRecord &) = delete;

    Outcome &outcome() { return m_outcome; }
    const RequestLog &log() const { return m_log; }
    bool isFinished() const { return m_finished; }

    // Any response head, whatever its status: the route's run of failures ends, the time to
    // it is observed, and the upstream's X-Request-Id (the transport dropped an unfit one)
    // is quoted from now on, in the log and to the client.
    void noteHead(const UpstreamHead &head, qint64 latencyNs);
    // What a relayed head gets: SLP's own X-Request-Id when the upstream sent none.
    void addRequestId(HeaderList &headers) const;
    // The X-Request-Id the client is told: the upstream's once it sent one, else SLP's.
    QByteArray clientRequestId() const;

    // One attempt that got no response head: counted (by reason, and in the route's
    // consecutive failures) and kept for the log line.
    void attemptFailed(int attempt, const UpstreamCall::End &failed, bool timedOut);
    // Every attempt failed before a head: the exchange ends (UpstreamFailed) and the client
    // gets the 502 in SLP's words for `subject` ("request", "WebSocket upgrade").
    void answerUpstreamFailure(ResponseWriter *writer, const UpstreamCall::End &failed,
                               bool timedOut, const QString &subject);

    // The one place an exchange ends (once; later calls do nothing).
    void finish(Ending how);

private:
    const ExchangeContext &m_context;
    const ForwardPlan &m_plan;
    const RouteForwarding &m_route;
    InFlight m_inFlight;
    RequestLog m_log;
    Outcome m_outcome;
    QByteArray m_upstreamId;
    bool m_finished = false;
};

} // namespace slp
