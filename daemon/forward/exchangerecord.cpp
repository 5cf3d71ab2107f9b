// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/exchangerecord.h"

#include "forward/exchangecontext.h"
#include "forward/exchangecounter.h"
#include "forward/forwardplan.h"
#include "forward/routehealth.h"
#include "http/responsewriter.h"
#include "observe/metrics.h"

namespace slp {

ExchangeRecord::ExchangeRecord(const ExchangeContext &context, const ForwardPlan &plan,
                               InFlight inFlight)
    : m_context(context), m_plan(plan), m_route(*plan.route), m_inFlight(inFlight),
      m_log(plan, context)
{
    if (m_context.exchanges)
        m_context.exchanges->add(); // a drain waits for every exchange, tunnels too
    if (m_inFlight == InFlight::Counted) {
        m_context.metrics.add(metric::inflightRequests, {}, 1);
        m_context.metrics.add(metric::routeInflight, m_route.labels, 1);
    }
}

ExchangeRecord::~ExchangeRecord()
{
    if (m_inFlight == InFlight::Counted) {
        m_context.metrics.add(metric::inflightRequests, {}, -1);
        m_context.metrics.add(metric::routeInflight, m_route.labels, -1);
    }
    if (m_context.exchanges)
        m_context.exchanges->remove();
}

void ExchangeRecord::noteHead(const UpstreamHead &head, qint64 latencyNs)
{
    m_context.metrics.set(metric::consecutiveFailures, m_route.labels, 0);
    m_context.metrics.observe(metric::upstreamLatency, m_route.labels, double(latencyNs) / 1e9);
    m_outcome.latencyNs = latencyNs;
    m_upstreamId = headerValue(head.headers, "x-request-id");
    m_log.setUpstreamId(m_upstreamId);
}

void ExchangeRecord::addRequestId(HeaderList &headers) const
{
    if (m_upstreamId.isEmpty())
        headers.append({QByteArrayLiteral("X-Request-Id"), m_plan.requestId});
}

QByteArray ExchangeRecord::clientRequestId() const
{
    return m_upstreamId.isEmpty() ? m_plan.requestId : m_upstreamId;
}

void ExchangeRecord::attemptFailed(int attempt, const UpstreamCall::End &failed, bool timedOut)
{
    ++m_outcome.failedAttempts;
    m_outcome.attempt = attempt;
    m_outcome.timedOut = timedOut;
    m_outcome.peer = inParens(failed.peer);
    m_outcome.logDetail = timedOut ? QString() : failed.detail;
    countFailedAttempt(m_context.metrics, m_route, failed, timedOut);
}

void ExchangeRecord::answerUpstreamFailure(ResponseWriter *writer, const UpstreamCall::End &failed,
                                           bool timedOut, const QString &subject)
{
    m_outcome.status = 502;
    m_outcome.clientRequestId = m_plan.requestId;
    m_outcome.what = whatFailed(failed.failure, timedOut, m_route.timeoutText);
    finish(Ending::UpstreamFailed);
    if (!writer)
        return;
    const QString id = QString::fromLatin1(m_plan.requestId);
    const QString message =
        timedOut ? QStringLiteral("upstream %1 timed out after %2 (request id: %3)")
                       .arg(subject, m_route.timeoutText, id)
                 : QStringLiteral("upstream %1 failed (request id: %2)").arg(subject, id);
    writer->respondError(502, message, m_plan.requestId,
                         timedOut ? "upstream_timeout" : "upstream_failed");
}

void ExchangeRecord::finish(Ending how)
{
    if (m_finished)
        return;
    m_finished = true;
    m_outcome.ending = how;
    if (m_outcome.clientRequestId.isEmpty())
        m_outcome.clientRequestId = clientRequestId();
    countRequest(m_context.metrics, m_route, m_outcome);
    logEnding(m_log, m_outcome);
    if (m_context.health)
        m_context.health->record(m_route.modelId, m_route.timeout, healthReportOf(m_outcome));
}

} // namespace slp
