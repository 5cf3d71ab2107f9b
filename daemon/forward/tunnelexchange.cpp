// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/tunnelexchange.h"

#include "forward/exchangecounter.h"
#include "forward/forwardheaders.h"
#include "forward/routehealth.h"
#include "http/responsewriter.h"
#include "observe/metrics.h"

#include <unistd.h>

namespace slp {

TunnelExchange::TunnelExchange(ForwardPlan plan, UpstreamTransport &transport,
                               MetricsRegistry &metrics, ResponseWriter *writer)
    : QObject(writer), m_plan(std::move(plan)), m_transport(transport), m_metrics(metrics),
      m_writer(writer)
{
    if (m_plan.exchanges)
        m_plan.exchanges->add(); // a drain waits for a tunnel as for a request in flight
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, &TunnelExchange::onTimeout);
    connect(writer, &ResponseWriter::clientGone, this, &TunnelExchange::onClientGone);
}

void TunnelExchange::onClientGone()
{
    if (m_splice || m_outcome.status != 0)
        return; // answered already
    m_timeout.stop();
    m_call.reset(); // not inside its callback: the client left
    m_outcome.status = 499;
    record(Ending::ClientGone);
}

TunnelExchange::~TunnelExchange()
{
    if (m_splice && !m_splice->isFinished())
        m_splice->cut(); // the worker stops: the tunnel is counted and logged as it goes
    if (m_plan.exchanges)
        m_plan.exchanges->remove();
}

void TunnelExchange::start()
{
    m_since.start();
    m_timeout.start(m_route.timeout); // the route's timeout bounds the wait for the 101
    // A call that fails at once reports from inside upgrade() and returns null.
    m_call = m_transport.upgrade(m_plan.request, *this);
}

void TunnelExchange::record(Ending how)
{
    m_outcome.ending = how;
    if (m_outcome.clientRequestId.isEmpty())
        m_outcome.clientRequestId = m_plan.requestId;
    countRequest(m_metrics, m_route, m_outcome);
    logEnding(m_log, m_outcome);
    if (m_plan.health)
        m_plan.health->record(m_route.modelId, m_route.timeout, healthReportOf(m_outcome));
}

HeaderList TunnelExchange::noteHead(const UpstreamHead &head, HeaderList headers)
{
    // As for a relayed answer: any head ends the run of failures, and the upstream's id (the
    // transport dropped an unfit one) is the one the client and the log lines get.
    m_timeout.stop();
    m_metrics.set(metric::consecutiveFailures, m_route.labels, 0);
    m_outcome.status = head.status;
    m_outcome.latencyNs = m_since.nsecsElapsed();
    m_metrics.observe(metric::upstreamLatency, m_route.labels, double(m_outcome.latencyNs) / 1e9);
    const QByteArray upstreamId = headerValue(head.headers, "x-request-id");
    m_log.setUpstreamId(upstreamId);
    if (upstreamId.isEmpty())
        headers.append({QByteArrayLiteral("X-Request-Id"), m_plan.requestId});
    else
        m_outcome.clientRequestId = upstreamId;
    return headers;
}

void TunnelExchange::upgradeSwitched(const UpstreamHead &head)
{
    // Upgrade, Connection and Sec-WebSocket-* pass: this is a 101.
    const QByteArray switchHead =
        serializeHead(head.status, head.reason, noteHead(head, head.headers), {}, {});
    QByteArray upstreamEarly;
    const int upstreamFd = m_call->takeConnection(&upstreamEarly);
    QByteArray clientEarly;
    QObject *owner = nullptr;
    const int clientFd = m_writer ? m_writer->takeConnection(&clientEarly, &owner) : -1;
    if (clientFd < 0) {
        ::close(upstreamFd);
        m_outcome.status = 499;
        return record(Ending::ClientGone);
    }
    m_clientSocket = owner;
    m_switchHeadBytes = switchHead.size();
    record(Ending::Completed); // the upgrade's answer: counted (code 101) and logged now
    m_metrics.add(metric::openTunnels, m_route.labels, 1);
    m_splice = new Splice(clientFd, upstreamFd, clientEarly, switchHead + upstreamEarly,
                          kBufferBytes, this);
    m_since.restart();
    connect(m_splice, &Splice::finished, this, &TunnelExchange::onSpliceEnded);
    m_splice->setIdleTimeout(m_route.streamIdleTimeout);
}

void TunnelExchange::onSpliceEnded(Splice::End end)
{
    // The 101 head SLP wrote is not the client's traffic.
    const qint64 up = m_splice->bytesToUpstream();
    const qint64 down = m_splice->bytesToClient() - m_switchHeadBytes;
    m_metrics.add(metric::openTunnels, m_route.labels, -1);
    m_metrics.add(metric::tunnelBytes,
                  {{QStringLiteral("model_id"), m_route.modelId},
                   {QStringLiteral("direction"), QStringLiteral("up")}},
                  double(up));
    m_metrics.add(metric::tunnelBytes,
                  {{QStringLiteral("model_id"), m_route.modelId},
                   {QStringLiteral("direction"), QStringLiteral("down")}},
                  double(down));
    QString how = QString::fromLatin1(Splice::endName(end));
    if (end == Splice::End::Idle)
        how = QStringLiteral("closed: idle for ") + m_route.streamIdleTimeoutText;
    m_log.tunnelClosed(up, down, m_since.elapsed(), how, end == Splice::End::Closed);
    if (m_clientSocket)
        m_clientSocket->deleteLater(); // this exchange goes with it
}

void TunnelExchange::upgradeAnswered(const UpstreamHead &head, const QByteArray &body)
{
    // Refused upstream (a 403, a 426...): relayed as an ordinary response; the connection
    // then closes (it asked to leave HTTP).
    ResponseHead out;
    out.status = head.status;
    out.reason = head.reason;
    out.headers = noteHead(head, prepareClientHeaders(head.headers));
    m_outcome.bytesDown = body.size();
    out.contentLength = body.size();
    record(Ending::Completed);
    if (!m_writer)
        return;
    m_writer->writeHead(out);
    if (m_writer)
        m_writer->writeBody(body);
    if (m_writer)
        m_writer->finish();
}

void TunnelExchange::upgradeFailed(const UpstreamCall::End &failed)
{
    m_timeout.stop();
    m_outcome.status = 502;
    m_outcome.failedAttempts = 1;
    m_outcome.attempt = 1;
    m_outcome.timedOut = m_timedOut;
    m_outcome.logDetail = failed.detail;
    m_outcome.peer = inParens(m_call ? m_call->peerForLog() : failed.peer);
    m_outcome.what = whatFailed(failed.failure, m_timedOut, m_route.timeoutText);
    countFailedAttempt(m_metrics, m_route, failed, m_timedOut);
    record(Ending::UpstreamFailed);
    if (!m_writer)
        return;
    const QString message =
        m_timedOut ? QStringLiteral("upstream did not answer the WebSocket upgrade within %1 "
                                    "(request id: %2)")
                         .arg(m_route.timeoutText, QString::fromLatin1(m_plan.requestId))
                   : QStringLiteral("upstream WebSocket upgrade failed (request id: %1)")
                         .arg(QString::fromLatin1(m_plan.requestId));
    m_writer->respondError(502, message, m_plan.requestId,
                           m_timedOut ? "upstream_timeout" : "upstream_failed");
}

void TunnelExchange::onTimeout()
{
    m_timedOut = true;
    const QString peer = m_call ? m_call->peerForLog() : QString();
    m_call.reset(); // a timer's slot, not the call's callback: it closes its connection
    upgradeFailed({UpstreamCall::Failure::Aborted, QString(), peer, false});
}

} // namespace slp
