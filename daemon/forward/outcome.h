// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/routehealth.h"
#include "upstream/upstreamtransport.h"

#include <QByteArray>
#include <QString>

namespace slp {

struct RouteForwarding;
class MetricsRegistry;
class RequestLog;

// How an exchange ended: each is counted, logged and reported to the route once.
enum class Ending
{
    Completed,       // the whole answer reached the client (relayed or reassembled)
    Refused,         // 400: the transport cannot carry the request as sent
    UpstreamFailed,  // 502: every attempt failed before a response head
    AggregateFailed, // 502: the stream an aggregate route reassembles did not complete
    UpstreamClosed,  // the upstream's body did not end cleanly (or ran past its length)
    UpstreamReset,   // ... and the transport said the connection was reset
    IdleTimeout,     // stream_idle_timeout cut it (relayed), or stalled an aggregate (502)
    ClientGone,      // the client left first (499 when it had no head yet)
};

// One exchange's outcome, filled in as the exchange runs and recorded once, at its end
// (Envoy's ActiveStream::completeRequest): the one place that counts slp_requests_total and
// slp_responses_broken_total, writes the request's last log line and tells the route's health.
struct Outcome
{
    Ending ending = Ending::Completed;
    int status = 0;             // what the client got: the upstream's, SLP's own 400/502, or 499
    bool headRelayed = false;   // the upstream's head reached the client: a cut is then a broken
                                // response
    qint64 bytesDown = 0;       // body bytes relayed to the client
    qint64 upstreamBytes = 0;   // body bytes read from the upstream (relayed or reassembled)
    qint64 latencyNs = -1;      // to the upstream's response head; -1: none came
    int failedAttempts = 0;     // attempts that failed before a head (re-dial included)
    bool timedOut = false;      // the last attempt ran out of time to first byte
    int attempt = 0;            // the last attempt's number
    QString what;               // the route's last_failure sentence; never an address
    QString logDetail;          // the transport's words, for the log line only
    QString peer;               // " (ADDR:PORT)" for the log line, when the transport knows it
    QByteArray clientRequestId; // the X-Request-Id the client got
};

// " (127.0.0.1:8000)" for a log line, or empty when the transport does not know the peer.
QString inParens(const QString &peer);
// The route's last_failure sentence for an attempt that got no head: never an address.
QString whatFailed(UpstreamCall::Failure failure, bool timedOut, const QString &timeoutText);

// One attempt that got no response head: slp_upstream_attempt_failures_total by reason
// (timed out, connect, protocol) and the route's consecutive-failures gauge.
void countFailedAttempt(MetricsRegistry &metrics, const RouteForwarding &route,
                        const UpstreamCall::End &failed, bool timedOut);

// slp_requests_total, and slp_responses_broken_total for a relayed answer cut short.
void countRequest(MetricsRegistry &metrics, const RouteForwarding &route, const Outcome &o);
// The request's last log line (failures always; a completed request with log_requests).
void logEnding(const RequestLog &log, const Outcome &o);
// What the route's health learns from it.
HealthReport healthReportOf(const Outcome &o);

} // namespace slp
