// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/tunnelexchange.h"

#include "forward/exchangecontext.h"
#include "forward/forwardheaders.h"
#include "http/responsewriter.h"
#include "observe/metrics.h"

#include <unistd.h>

namespace slp {

TunnelExchange::TunnelExchange(ForwardPlan plan, const ExchangeContext &context,
                               ResponseWriter *writer)
    : QObject(writer), m_plan(std::move(plan)), m_context(context),
      m_record(context, m_plan, ExchangeRecord::InFlight::NotCounted), m_writer(writer)
{
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, &TunnelExchange::onTimeout);
    connect(writer, &ResponseWriter::clientGone, this, &TunnelExchange::onClientGone);
}

void TunnelExchange::onClientGone()
{
    if (m_relay || m_record.isFinished())
        return; // answered already
    m_timeout.stop();
    m_call.reset(); // not inside its callback: the client left
    m_record.outcome().status = 499;
    m_record.finish(Ending::ClientGone);
}

TunnelExchange::~TunnelExchange()
{
    if (m_relay && !m_relay->isFinished())
        m_relay->cut(); // the worker stops: the tunnel is counted and logged as it goes
}

void TunnelExchange::start()
{
    m_since.start();
    m_timeout.start(m_route.timeout); // the route's timeout bounds the wait for the 101
    // A call that fails at once reports from inside upgrade() and returns null.
    m_call = m_context.transport.upgrade(m_plan.request, *this);
}

HeaderList TunnelExchange::noteHead(const UpstreamHead &head, HeaderList headers)
{
    m_timeout.stop();
    m_record.outcome().status = head.status;
    m_record.noteHead(head, m_since.nsecsElapsed());
    m_record.addRequestId(headers);
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
        m_record.outcome().status = 499;
        return m_record.finish(Ending::ClientGone);
    }
    m_clientSocket = owner;
    m_switchHeadBytes = switchHead.size();
    m_record.finish(Ending::Completed); // the upgrade's answer: counted (code 101), logged now
    m_context.metrics.add(metric::openTunnels, m_route.labels, 1);
    m_relay = new SocketRelay(clientFd, upstreamFd, clientEarly, switchHead + upstreamEarly,
                              kBufferBytes, this);
    m_since.restart();
    connect(m_relay, &SocketRelay::finished, this, &TunnelExchange::onRelayEnded);
    m_relay->setIdleTimeout(m_route.streamIdleTimeout);
}

void TunnelExchange::onRelayEnded(SocketRelay::End end)
{
    // The 101 head SLP wrote is not the client's traffic.
    const qint64 up = m_relay->bytesToUpstream();
    const qint64 down = m_relay->bytesToClient() - m_switchHeadBytes;
    MetricsRegistry &metrics = m_context.metrics;
    metrics.add(metric::openTunnels, m_route.labels, -1);
    metrics.add(metric::tunnelBytes,
                {{QStringLiteral("model_id"), m_route.modelId},
                 {QStringLiteral("direction"), QStringLiteral("up")}},
                double(up));
    metrics.add(metric::tunnelBytes,
                {{QStringLiteral("model_id"), m_route.modelId},
                 {QStringLiteral("direction"), QStringLiteral("down")}},
                double(down));
    QString how = QString::fromLatin1(SocketRelay::endName(end));
    if (end == SocketRelay::End::Idle)
        how = QStringLiteral("closed: idle for ") + m_route.streamIdleTimeoutText;
    m_record.log().tunnelClosed(up, down, m_since.elapsed(), how, end == SocketRelay::End::Closed);
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
    m_record.outcome().bytesDown = body.size();
    out.contentLength = body.size();
    m_record.finish(Ending::Completed);
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
    UpstreamCall::End end = failed;
    if (m_call && end.peer.isEmpty())
        end.peer = m_call->peerForLog();
    m_record.attemptFailed(1, end, m_timedOut);
    m_record.answerUpstreamFailure(m_writer, end, m_timedOut, QStringLiteral("WebSocket upgrade"));
}

void TunnelExchange::onTimeout()
{
    m_timedOut = true;
    const QString peer = m_call ? m_call->peerForLog() : QString();
    m_call.reset(); // a timer's slot, not the call's callback: it closes its connection
    upgradeFailed({UpstreamCall::Failure::Aborted, QString(), peer, false});
}

} // namespace slp
