// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/outcome.h"

#include "forward/forwardplan.h"
#include "forward/requestlog.h"
#include "observe/metrics.h"

#include <QDateTime>

namespace slp {

namespace {

QString brokenReason(Ending how)
{
    switch (how) {
    case Ending::IdleTimeout:
        return QStringLiteral("idle_timeout");
    case Ending::UpstreamReset:
        return QStringLiteral("upstream_reset");
    case Ending::ClientGone:
        return QStringLiteral("client_gone");
    default:
        return QStringLiteral("upstream_closed");
    }
}

bool isRouteFailure(Ending how)
{
    switch (how) {
    case Ending::UpstreamFailed:
    case Ending::AggregateFailed:
    case Ending::UpstreamClosed:
    case Ending::UpstreamReset:
    case Ending::IdleTimeout:
        return true;
    default:
        return false;
    }
}

} // namespace

QString inParens(const QString &peer) // " (127.0.0.1:8000)", or empty
{
    return peer.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(peer);
}

// The route's last_failure sentence for an attempt that got no head: never an address.
QString whatFailed(UpstreamCall::Failure failure, bool timedOut, const QString &timeoutText)
{
    if (timedOut)
        return QStringLiteral("timed out after ") + timeoutText;
    switch (failure) {
    case UpstreamCall::Failure::Refused:
        return QStringLiteral("connection refused");
    case UpstreamCall::Failure::Closed:
        return QStringLiteral("connection closed before a response head");
    case UpstreamCall::Failure::NameLookup:
        return QStringLiteral("backend host name not found");
    case UpstreamCall::Failure::Protocol:
        return QStringLiteral("malformed response head");
    default:
        return QStringLiteral("upstream request failed");
    }
}

void countFailedAttempt(MetricsRegistry &metrics, const RouteForwarding &route,
                        const UpstreamCall::End &failed, bool timedOut)
{
    const QString reason = timedOut                            ? QStringLiteral("timed out")
                           : failed.isConnectionLevelFailure() ? QStringLiteral("connect")
                                                               : QStringLiteral("protocol");
    metrics.add(metric::upstreamAttempts,
                {{QStringLiteral("model_id"), route.modelId}, {QStringLiteral("reason"), reason}});
    metrics.add(metric::consecutiveFailures, route.labels);
}

void countRequest(MetricsRegistry &metrics, const RouteForwarding &route, const Outcome &o)
{
    metrics.add(metric::requestsTotal, metric::requestLabels(route.modelId, o.status));
    if (o.headRelayed && o.ending != Ending::Completed)
        metrics.add(metric::responsesBroken, {{QStringLiteral("model_id"), route.modelId},
                                              {QStringLiteral("reason"), brokenReason(o.ending)}});
}

void logEnding(const RequestLog &log, const Outcome &o)
{
    switch (o.ending) {
    case Ending::Completed:
        return log.completed(o.status, o.latencyNs, o.bytesDown);
    case Ending::Refused:
        return log.refused(o.logDetail);
    case Ending::UpstreamFailed:
        return log.attemptFailed(o.attempt, o.timedOut, o.peer, o.logDetail);
    case Ending::AggregateFailed:
        return log.aggregateFailed(o.logDetail);
    case Ending::UpstreamClosed:
    case Ending::UpstreamReset:
        return log.brokeOff(o.bytesDown, o.peer, o.logDetail);
    case Ending::IdleTimeout:
        return log.streamIdle(o.upstreamBytes);
    case Ending::ClientGone:
        return log.clientGone();
    }
}

HealthReport healthReportOf(const Outcome &o)
{
    HealthReport r;
    r.failedAttempts = o.failedAttempts;
    r.headArrived = o.latencyNs >= 0;
    r.headLatency = std::chrono::milliseconds(o.latencyNs / 1000000);
    switch (o.ending) {
    case Ending::Completed:
        r.body = HealthReport::Body::Completed;
        break;
    case Ending::ClientGone:
        r.body = HealthReport::Body::ClientLeft;
        break;
    case Ending::AggregateFailed:
    case Ending::UpstreamClosed:
    case Ending::UpstreamReset:
    case Ending::IdleTimeout:
        r.body = r.headArrived ? HealthReport::Body::Cut : HealthReport::Body::None;
        break;
    default:
        break;
    }
    if (isRouteFailure(o.ending))
        r.failure = RouteFailure{QDateTime::currentDateTimeUtc(), o.what,
                                 QString::fromLatin1(o.clientRequestId)};
    return r;
}

} // namespace slp
