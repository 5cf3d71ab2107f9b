// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/forwardexchange.h"

#include "aggregate/sseaggregator.h"
#include "forward/exchangecounter.h"
#include "forward/forwardheaders.h"
#include "forward/requestlog.h"
#include "forward/streamwatch.h"
#include "http/errorbody.h"
#include "http/responsewriter.h"
#include "observe/metrics.h"
#include "wire/mediatype.h"

namespace slp {

namespace {
constexpr qint64 kRelayPiece = 64 * 1024;
// An SSE comment event: every client ignores it, proxies and idle timers see traffic.
constexpr QByteArrayView kKeepaliveComment = ": keep-alive\n\n";
} // namespace

ForwardExchange::ForwardExchange(ForwardPlan plan, UpstreamTransport &transport,
                                 MetricsRegistry &metrics, ResponseWriter *writer)
    : QObject(writer), m_plan(std::move(plan)), m_routeLabels(metric::modelLabels(m_plan.modelId)),
      m_transport(transport), m_metrics(metrics), m_writer(writer)
{
    m_ttfbTimer.setSingleShot(true);
    // A precise timer: the timeout is a contract number that shows in 502 messages.
    m_ttfbTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_ttfbTimer, &QTimer::timeout, this, &ForwardExchange::onTimeout);
    connect(writer, &ResponseWriter::writable, this, &ForwardExchange::relay);
    connect(writer, &ResponseWriter::clientGone, this, &ForwardExchange::onClientGone);
    m_metrics.add(metric::inflightRequests, {}, 1);
    if (m_plan.exchanges) {
        m_plan.exchanges->add();
    }
    m_metrics.add(metric::routeInflight, m_routeLabels, 1);
}

ForwardExchange::~ForwardExchange()
{
    m_metrics.add(metric::inflightRequests, {}, -1);
    if (m_plan.exchanges) {
        m_plan.exchanges->remove();
    }
    m_metrics.add(metric::routeInflight, m_routeLabels, -1);
    if (!m_call) {
        return;
    }
    m_call->disconnect(this);
    const bool cleanEnd = m_done && m_call->headArrived() &&
                          m_call->failure() == UpstreamCall::Failure::None && !m_clientGone;
    if (cleanEnd && m_call->isRunning()) {
        // Every byte arrived; the transport is only finishing its bookkeeping. Let it, so the
        // upstream connection stays open for the next request.
        UpstreamCall *call = m_call.release();
        connect(call, &UpstreamCall::finished, call, &QObject::deleteLater);
        return;
    }
    m_call->abort(); // a client that left must stop the GPU at once
}

void ForwardExchange::start()
{
    launch();
}

void ForwardExchange::launch()
{
    ++m_attempt;
    m_timedOut = false;
    m_sinceStart.start();
    m_call = m_transport.start(m_plan.request);
    if (m_attempt == 1 && m_plan.received.isValid()) {
        m_handOverNs = m_plan.received.nsecsElapsed();
    }
    connect(m_call.get(), &UpstreamCall::headReceived, this, &ForwardExchange::onHead);
    connect(m_call.get(), &UpstreamCall::readyRead, this, &ForwardExchange::relay);
    connect(m_call.get(), &UpstreamCall::finished, this, &ForwardExchange::onFinished);
    m_ttfbTimer.start(m_plan.timeout);
}

QString ForwardExchange::upstreamPeerForLog() const
{
    const QString peer = m_call ? m_call->peerForLog() : QString();
    return peer.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(peer);
}

void ForwardExchange::countRequest(int status)
{
    m_metrics.add(metric::requestsTotal, metric::requestLabels(m_plan.modelId, status));
}

void ForwardExchange::observeOverhead(const QElapsedTimer &sinceHead)
{
    m_metrics.observe(metric::overhead, {}, double(m_handOverNs + sinceHead.nsecsElapsed()) / 1e9);
}

void ForwardExchange::onHead(const UpstreamHead &head)
{
    QElapsedTimer sinceHead;
    sinceHead.start();
    m_ttfbTimer.stop();
    // Any head, whatever its status, proves the backend is there: the run of failures ends.
    m_metrics.set(metric::consecutiveFailures, m_routeLabels, 0);
    if (!m_writer || m_clientGone) {
        return;
    }
    m_latencyNs = m_sinceStart.nsecsElapsed();
    m_metrics.observe(metric::upstreamLatency, m_routeLabels, double(m_latencyNs) / 1e9);
    m_status = head.status;
    m_upstreamRequestId = headerValue(head.headers, "x-request-id");
    if (m_plan.aggregate != ForwardPlan::Aggregate::Off && head.status == 200 &&
        isEventStream(headerValue(head.headers, "content-type"))) {
        // Hold everything: the client gets one JSON answer (or a 502) once the stream ends.
        m_aggregator = std::make_unique<SseAggregator>(
            m_plan.aggregate == ForwardPlan::Aggregate::Chat ? SseAggregator::Kind::Chat
                                                             : SseAggregator::Kind::Completion);
        m_aggregateHeaders = head.headers;
        startWatch(false); // nothing reaches the client before the end: no comments
        aggregateAvailable();
        return;
    }
    // Upstream error statuses and backends that ignore "stream": true pass through untouched.
    countRequest(head.status);

    // A HEAD answer's Content-Length describes the GET it stands for: no body bytes follow.
    m_bodyless = statusHasNoBody(head.status) || m_plan.method == "HEAD";
    m_expectedLength = m_bodyless ? 0 : head.contentLength;
    ResponseHead out;
    out.status = head.status;
    out.reason = head.reason;
    out.headers = prepareClientHeaders(head.headers);
    // The upstream's id replaces SLP's once the upstream answered: it is the one its logs have.
    if (m_upstreamRequestId.isEmpty()) {
        out.headers.append({QByteArrayLiteral("X-Request-Id"), m_plan.requestId});
    }
    out.contentLength = head.contentLength;
    m_writer->writeHead(out);
    observeOverhead(sinceHead);
    // Comments only where they cannot break framing: a body of unknown length (a comment
    // would run past a Content-Length) that is an event stream.
    startWatch(!m_bodyless && head.contentLength < 0 &&
               isEventStream(headerValue(head.headers, "content-type")));
    relay();
}

void ForwardExchange::relay()
{
    if (!m_call || !m_writer || m_done || !m_call->headArrived()) {
        return;
    }
    if (m_aggregator) {
        aggregateAvailable();
        return;
    }
    // Pull from upstream only while the client keeps up: what is not read stays in the
    // transport's bounded buffer, so a slow client never makes SLP hold a whole response.
    while (m_call->bytesAvailable() > 0 && m_writer->isWritable()) {
        const QByteArray piece = m_call->read(kRelayPiece);
        if (piece.isEmpty()) {
            break;
        }
        m_bytesDown += piece.size();
        m_upstreamBytes += piece.size();
        if (m_watch && m_watch->keepaliveArmed()) {
            m_watch->relayed(piece);
        }
        if (!m_writer->writeBody(piece)) {
            // The excess would be read as the next response: the upstream connection is spent.
            m_call->disconnect(this);
            m_call->abort();
            return breakOff(QStringLiteral("the upstream sent more than its Content-Length"));
        }
    }
    // A declared length fully relayed is the end, whether or not the transport said finished
    // yet: a client that closes right after must not look like one that left mid-answer.
    if (m_expectedLength >= 0 && m_bytesDown >= m_expectedLength &&
        m_call->failure() == UpstreamCall::Failure::None) {
        m_upstreamDone = true;
    }
    if (m_upstreamDone && m_call->bytesAvailable() == 0) {
        complete();
    }
}

void ForwardExchange::complete()
{
    if (m_done) {
        return;
    }
    m_done = true;
    stopWatch();
    // A body shorter than its Content-Length is broken whatever the transport said.
    const bool shortBody = m_expectedLength >= 0 && m_bytesDown < m_expectedLength;
    const UpstreamCall::Failure failure =
        shortBody && m_call->failure() == UpstreamCall::Failure::None
            ? UpstreamCall::Failure::BrokenBody
            : m_call->failure();
    if (failure != UpstreamCall::Failure::None) {
        return breakOff(m_call->errorDetail());
    }
    m_writer->finish();
    logCompletion();
}

void ForwardExchange::breakOff(const QString &detail)
{
    m_done = true;
    stopWatch();
    // Never a silently truncated success: the client sees the connection end uncleanly.
    m_log.brokeOff(m_bytesDown, upstreamPeerForLog(), detail);
    m_writer->breakConnection();
}

void ForwardExchange::logCompletion()
{
    m_log.completed(m_status, m_latencyNs, m_bytesDown, m_upstreamRequestId);
}

void ForwardExchange::aggregateAvailable()
{
    // Read as fast as the upstream sends: memory grows with the generated output only (the
    // aggregator keeps assembled strings, not the raw stream).
    while (m_call->bytesAvailable() > 0 &&
           m_aggregator->state() == SseAggregator::State::Streaming) {
        const QByteArray piece = m_call->read(kRelayPiece);
        if (piece.isEmpty()) {
            break;
        }
        m_upstreamBytes += piece.size();
        m_aggregator->feed(piece);
    }
    if (m_aggregator->state() != SseAggregator::State::Streaming) {
        finishAggregate(); // an in-band error or garbage: no need to wait for the end
        return;
    }
    if (m_upstreamDone && m_call->bytesAvailable() == 0) {
        if (m_call->failure() == UpstreamCall::Failure::None) {
            m_aggregator->finishInput();
        }
        finishAggregate();
    }
}

void ForwardExchange::finishAggregate()
{
    if (m_done) {
        return;
    }
    m_done = true;
    stopWatch();
    const SseAggregator::State state = m_aggregator->state();
    if (state == SseAggregator::State::Done) {
        // The client's head waits for the whole stream: SLP's share is building the answer.
        QElapsedTimer building;
        building.start();
        const QByteArray body = m_aggregator->result();
        m_bytesDown = body.size();
        countRequest(200);
        ResponseHead out;
        for (const auto &header : prepareClientHeaders(m_aggregateHeaders)) {
            if (header.first.compare("content-type", Qt::CaseInsensitive) == 0 ||
                header.first.compare("cache-control", Qt::CaseInsensitive) == 0) {
                continue; // they described the stream, not this answer
            }
            out.headers.append(header);
        }
        if (m_upstreamRequestId.isEmpty()) {
            out.headers.append({QByteArrayLiteral("X-Request-Id"), m_plan.requestId});
        }
        out.headers.append(
            {QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")});
        out.contentLength = body.size();
        m_writer->writeHead(out);
        m_writer->writeBody(body);
        observeOverhead(building);
        m_writer->finish();
        logCompletion();
        return;
    }
    if (state == SseAggregator::State::UpstreamError) {
        answerAggregateFailure(m_aggregator->errorJson(),
                               QStringLiteral("the upstream sent an error event mid-stream"));
        return;
    }
    const bool lost = m_call->failure() != UpstreamCall::Failure::None;
    const QString reason =
        lost ? QStringLiteral("upstream connection lost: ") + m_call->errorDetail()
             : m_aggregator->malformedReason();
    answerAggregateFailure(
        openAiErrorJson(QStringLiteral("upstream stream ended before completion (request id: %1)")
                            .arg(QString::fromLatin1(m_plan.requestId)),
                        QStringLiteral("upstream_error"), "upstream_incomplete"),
        reason);
}

void ForwardExchange::answerAggregateFailure(const QByteArray &body, const QString &logReason)
{
    if (m_call) {
        m_call->disconnect(this);
        m_call->abort(); // nothing more of this stream can reach the client
    }
    if (!logReason.isEmpty()) { // empty: the caller logged it its own way
        m_log.aggregateFailed(logReason, m_upstreamRequestId);
    }
    countRequest(502);
    // The upstream answered, so its id (when it sent one) is the one to quote.
    const QByteArray id = m_upstreamRequestId.isEmpty() ? m_plan.requestId : m_upstreamRequestId;
    m_writer->respond(502, "application/json", body, id);
}

void ForwardExchange::onFinished()
{
    m_ttfbTimer.stop();
    if (m_clientGone || !m_writer) {
        return;
    }
    if (m_call->headArrived()) {
        m_upstreamDone = true;
        relay();
        return;
    }
    if (m_call->failure() == UpstreamCall::Failure::Unsendable) {
        // Nothing went upstream: the request itself is what the transport cannot carry.
        m_done = true;
        m_log.refused(m_call->errorDetail());
        countRequest(400);
        m_writer->respondError(400, m_call->errorDetail(), m_plan.requestId);
        return;
    }
    failBeforeHead();
}

void ForwardExchange::failBeforeHead()
{
    m_log.attemptFailed(m_attempt, m_timedOut, upstreamPeerForLog(),
                        m_timedOut ? QString() : m_call->errorDetail());
    const QString reason = m_timedOut                           ? QStringLiteral("timed out")
                           : m_call->isConnectionLevelFailure() ? QStringLiteral("connect")
                                                                : QStringLiteral("protocol");
    m_metrics.add(metric::upstreamAttempts, {{QStringLiteral("model_id"), m_plan.modelId},
                                             {QStringLiteral("reason"), reason}});
    m_metrics.add(metric::consecutiveFailures, m_routeLabels);

    // One re-dial, only when nothing reached the upstream's model: never after a timeout (it
    // may still be generating) and never once any response byte arrived.
    if (!m_timedOut && m_call->isConnectionLevelFailure() && m_attempt < m_plan.maxAttempts) {
        // The old call is finishing inside its own signal: let the event loop delete it.
        m_call.release()->deleteLater();
        launch();
        return;
    }

    m_done = true;
    const QString message =
        m_timedOut ? QStringLiteral("upstream request timed out after %1 (request id: %2)")
                         .arg(m_plan.timeoutText, QString::fromLatin1(m_plan.requestId))
                   : QStringLiteral("upstream request failed (request id: %1)")
                         .arg(QString::fromLatin1(m_plan.requestId));
    countRequest(502);
    m_writer->respondError(502, message, m_plan.requestId,
                           m_timedOut ? "upstream_timeout" : "upstream_failed");
}

void ForwardExchange::onTimeout()
{
    if (!m_call || m_call->headArrived()) {
        return;
    }
    m_timedOut = true;
    m_call->abort(); // finished() follows, synchronously or soon
}

void ForwardExchange::onClientGone()
{
    if (m_clientGone) {
        return;
    }
    m_clientGone = true;
    m_ttfbTimer.stop();
    if (!m_done && m_call && !m_call->headArrived()) {
        countRequest(499); // nginx's code for "client closed the request"
    }
    if (!m_done) {
        m_log.clientGone();
    }
    m_done = true;
    stopWatch();
    if (m_call) {
        m_call->disconnect(this);
        m_call->abort();
    }
}

void ForwardExchange::startWatch(bool keepalive)
{
    m_watch = StreamWatch::create(m_plan.streamIdleTimeout, m_plan.sseKeepalive, keepalive,
                                  m_call.get(), this);
    if (m_watch) {
        connect(m_watch, &StreamWatch::stalled, this, &ForwardExchange::onStalled);
        connect(m_watch, &StreamWatch::keepaliveDue, this, &ForwardExchange::onKeepaliveDue);
    }
}

void ForwardExchange::stopWatch()
{
    if (m_watch) {
        m_watch->stop();
    }
}

void ForwardExchange::onStalled()
{
    if (m_done || !m_call || !m_writer || m_upstreamDone) {
        return;
    }
    if (m_call->bytesAvailable() > 0) {
        // Bytes wait for a slow client (backpressure): the upstream is not the silent one.
        m_watch->upstreamActivity();
        return;
    }
    m_log.streamIdle(m_upstreamBytes);
    m_metrics.add(metric::streamIdleTimeouts, m_routeLabels);
    m_done = true;
    stopWatch();
    if (m_aggregator) { // nothing was sent yet: a 502, and the upstream call aborted
        return answerAggregateFailure(
            openAiErrorJson(QStringLiteral("upstream stream stalled (request id: %1)")
                                .arg(QString::fromLatin1(m_plan.requestId)),
                            QStringLiteral("upstream_error"), "upstream_stalled"),
            QString());
    }
    m_call->disconnect(this);
    m_call->abort(); // closes the upstream connection: a wedged worker holds nothing of ours
    m_writer->breakConnection(); // chunked: no last chunk; Content-Length: short; then closed
}

void ForwardExchange::onKeepaliveDue()
{
    // Skipped while the client is backed up or bytes wait: the next tick tries again.
    if (m_done || !m_call || !m_writer || m_call->bytesAvailable() > 0 || !m_writer->isWritable()) {
        return;
    }
    m_writer->writeBody(kKeepaliveComment.toByteArray());
    m_metrics.add(metric::sseKeepalives, m_routeLabels);
}

} // namespace slp
