// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/forwardexchange.h"

#include "forward/aggregateanswer.h"
#include "forward/exchangecontext.h"
#include "forward/forwardheaders.h"
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

ForwardExchange::ForwardExchange(ForwardPlan plan, const ExchangeContext &context,
                                 ResponseWriter *writer)
    : QObject(writer), m_plan(std::move(plan)), m_context(context),
      m_record(context, m_plan, ExchangeRecord::InFlight::Counted), m_writer(writer)
{
    m_ttfbTimer.setSingleShot(true);
    // A precise timer: the timeout is a contract number that shows in 502 messages.
    m_ttfbTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_ttfbTimer, &QTimer::timeout, this, &ForwardExchange::onTimeout);
    connect(writer, &ResponseWriter::writable, this, &ForwardExchange::pump);
    connect(writer, &ResponseWriter::clientGone, this, &ForwardExchange::onClientGone);
}

ForwardExchange::~ForwardExchange()
{
    if (!m_call)
        return;
    m_call->detachObserver();
    const bool cleanEnd = m_phase == Phase::Done &&
                          m_record.outcome().ending == Ending::Completed &&
                          m_call->failure() == UpstreamCall::Failure::None;
    if (cleanEnd && m_call->isRunning()) {
        // Every byte arrived; the transport is only finishing its bookkeeping. Let it, so the
        // upstream connection stays open for the next request.
        UpstreamCall::finishDetached(std::move(m_call));
        return;
    }
    m_call->abort(); // a client that left must stop the GPU at once
}

void ForwardExchange::enter(Phase next)
{
    Q_ASSERT(m_phase != Phase::Done);
    Q_ASSERT(next != Phase::WaitingForHead || m_phase == Phase::WaitingForHead);
    m_phase = next;
    if (next != Phase::WaitingForHead)
        m_ttfbTimer.stop(); // a head, or the end: time to first byte no longer counts
    if (next == Phase::Done && m_watch)
        m_watch->stop();
}

void ForwardExchange::end(Ending how)
{
    Outcome &o = m_record.outcome();
    o.headRelayed = m_phase == Phase::Relaying;
    o.bytesDown = m_bytesDown;
    o.upstreamBytes = m_upstreamBytes;
    o.attempt = m_attempt;
    o.timedOut = m_timedOut;
    enter(Phase::Done);
    m_record.finish(how);
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
    m_ttfbTimer.start(m_route.timeout); // first: a failure inside start() stops it
    if (m_attempt == 1 && m_plan.received.isValid())
        m_handOverNs = m_plan.received.nsecsElapsed();
    // A call that fails at once reports through upstreamFinished() from inside start(), which
    // may re-dial (a nested launch() that sets m_call) or answer; start() then returns null
    // and nothing of this attempt is left to keep.
    if (std::unique_ptr<UpstreamCall> call = m_context.transport.start(m_plan.request, *this))
        m_call = std::move(call);
}

void ForwardExchange::upstreamReadable()
{
    pump();
    if (m_watch)
        m_watch->upstreamActivity(); // read or not yet: the silence measured is the upstream's
}

// Nothing of this call reaches the client any more: stop it (closes its connection).
void ForwardExchange::stopCall()
{
    if (m_call) {
        m_call->detachObserver();
        m_call->abort();
    }
}

void ForwardExchange::observeOverhead(const QElapsedTimer &sinceHead)
{
    m_context.metrics.observe(metric::overhead, {},
                              double(m_handOverNs + sinceHead.nsecsElapsed()) / 1e9);
}

void ForwardExchange::onHead(const UpstreamHead &head)
{
    QElapsedTimer sinceHead;
    sinceHead.start();
    m_ttfbTimer.stop();
    // Any head, whatever its status, proves the backend is there: the run of failures ends.
    m_record.noteHead(head, m_sinceStart.nsecsElapsed());
    if (m_phase != Phase::WaitingForHead || !m_writer)
        return;
    if (m_plan.aggregate != ForwardPlan::Aggregate::Off && head.status == 200 &&
        isEventStream(headerValue(head.headers, "content-type"))) {
        // Hold everything: the client gets one JSON answer (or a 502) once the stream ends.
        m_aggregate = std::make_unique<AggregateAnswer>(m_plan.aggregate, head.headers,
                                                        m_plan.maxAnswerBytes);
        enter(Phase::Aggregating);
        startWatch(false); // nothing reaches the client before the end: no comments
        aggregateBody();
        return;
    }
    // Upstream error statuses and backends that ignore "stream": true pass through untouched.
    relayHead(head, sinceHead);
}

void ForwardExchange::relayHead(const UpstreamHead &head, const QElapsedTimer &sinceHead)
{
    m_record.outcome().status = head.status; // what the client gets, however its body ends
    // A HEAD answer's Content-Length describes the GET it stands for: no body bytes follow.
    const bool bodyless = statusHasNoBody(head.status) || m_plan.request.method == "HEAD";
    m_expectedLength = bodyless ? 0 : head.contentLength;
    ResponseHead out;
    out.status = head.status;
    out.reason = head.reason;
    out.headers = prepareClientHeaders(head.headers);
    // The upstream's id replaces SLP's once the upstream answered: it is the one its logs have.
    m_record.addRequestId(out.headers);
    out.contentLength = head.contentLength;
    enter(Phase::Relaying);
    m_writer->writeHead(out);
    observeOverhead(sinceHead);
    if (m_phase != Phase::Relaying)
        return; // the client left while its head was written
    // Comments only where they cannot break framing: a body of unknown length (a comment
    // would run past a Content-Length) that is an event stream.
    startWatch(!bodyless && head.contentLength < 0 &&
               isEventStream(headerValue(head.headers, "content-type")));
    relayBody();
}

void ForwardExchange::pump()
{
    if (!m_writer)
        return;
    if (m_phase == Phase::Relaying)
        relayBody();
    else if (m_phase == Phase::Aggregating)
        aggregateBody();
}

void ForwardExchange::relayBody()
{
    // Pull from upstream only while the client keeps up: what is not read stays in the
    // transport's bounded buffer, so a slow client never makes SLP hold a whole response.
    while (m_phase == Phase::Relaying && m_call->bytesAvailable() > 0 && m_writer->isWritable()) {
        const QByteArray piece = m_call->read(kRelayPiece);
        if (piece.isEmpty())
            break;
        m_bytesDown += piece.size();
        m_upstreamBytes += piece.size();
        if (m_watch && m_watch->keepaliveArmed())
            m_watch->relayed(piece);
        if (!m_writer->writeBody(piece)) {
            // The excess would be read as the next response: the upstream connection is spent.
            stopCall();
            const QString why = QStringLiteral("the upstream sent more than its Content-Length");
            return breakOff(why, why);
        }
    }
    // A declared length fully relayed is the end, whether or not the transport said finished
    // yet: a client that closes right after must not look like one that left mid-answer.
    if (m_expectedLength >= 0 && m_bytesDown >= m_expectedLength &&
        m_call->failure() == UpstreamCall::Failure::None)
        m_upstreamFinished = true;
    if (m_upstreamFinished && m_call->bytesAvailable() == 0)
        complete();
}

void ForwardExchange::complete()
{
    if (m_phase != Phase::Relaying)
        return;
    // A body shorter than its Content-Length is broken whatever the transport said.
    const bool shortBody = m_expectedLength >= 0 && m_bytesDown < m_expectedLength;
    if (shortBody || m_call->failure() != UpstreamCall::Failure::None)
        return breakOff(m_call->errorDetail());
    end(Ending::Completed);
    m_writer->finish();
}

void ForwardExchange::breakOff(const QString &detail, const QString &what)
{
    // Qt reports a reset as a plain close: only a transport that can tell says ResetBody.
    const bool reset = m_call->failure() == UpstreamCall::Failure::ResetBody;
    Outcome &o = m_record.outcome();
    o.logDetail = detail;
    o.peer = inParens(m_call->peerForLog());
    o.what = !what.isEmpty() ? what
                             : QStringLiteral("upstream %1 mid-body after %2 bytes")
                                   .arg(reset ? QStringLiteral("reset") : QStringLiteral("closed"))
                                   .arg(m_bytesDown);
    end(reset ? Ending::UpstreamReset : Ending::UpstreamClosed);
    // Never a silently truncated success: the client sees the connection end uncleanly.
    m_writer->breakConnection();
}

void ForwardExchange::aggregateBody()
{
    m_upstreamBytes += m_aggregate->read(*m_call);
    if (!m_aggregate->decided()) {
        if (!m_upstreamFinished || m_call->bytesAvailable() > 0)
            return; // more to come
        m_aggregate->endOfInput(m_call->failure() == UpstreamCall::Failure::None);
    }
    finishAggregate(); // decided early (an in-band error or garbage), or the stream ended
}

void ForwardExchange::finishAggregate()
{
    if (!m_aggregate->succeeded()) {
        m_record.outcome().logDetail = m_aggregate->failureReason(*m_call);
        m_record.outcome().what = m_aggregate->failureWhat();
        return answerAggregateFailure(Ending::AggregateFailed,
                                      m_aggregate->failureBody(m_plan.requestId));
    }
    m_record.outcome().status = 200;
    // The client's head waits for the whole stream: SLP's share is building the answer.
    QElapsedTimer building;
    building.start();
    const QByteArray body = m_aggregate->body();
    m_bytesDown = body.size();
    end(Ending::Completed);
    ResponseHead out = m_aggregate->head(m_record);
    out.contentLength = body.size();
    m_writer->writeHead(out);
    m_writer->writeBody(body);
    observeOverhead(building);
    m_writer->finish();
}

void ForwardExchange::answerAggregateFailure(Ending how, const QByteArray &body)
{
    // The upstream answered, so its id (when it sent one) is the one to quote.
    const QByteArray id = m_record.clientRequestId();
    m_record.outcome().status = 502;
    end(how);
    stopCall(); // nothing more of this stream can reach the client
    m_writer->respond(502, "application/json", body, id);
}

void ForwardExchange::onFinished(const UpstreamCall::End &outcome)
{
    m_ttfbTimer.stop();
    if (m_phase == Phase::Done || !m_writer)
        return;
    if (outcome.headArrived) {
        m_upstreamFinished = true;
        pump();
        return;
    }
    if (outcome.failure == UpstreamCall::Failure::Unsendable) {
        // Nothing went upstream: the request itself is what the transport cannot carry.
        m_record.outcome().status = 400;
        m_record.outcome().logDetail = outcome.detail;
        end(Ending::Refused);
        m_writer->respondError(400, outcome.detail, m_plan.requestId);
        return;
    }
    failBeforeHead(outcome);
}

void ForwardExchange::failBeforeHead(const UpstreamCall::End &failed)
{
    m_record.attemptFailed(m_attempt, failed, m_timedOut);
    // One re-dial, only when nothing reached the upstream's model: never after a timeout (it
    // may still be generating) and never once any response byte arrived.
    if (!m_timedOut && failed.isConnectionLevelFailure() && m_attempt < m_route.maxAttempts) {
        const Outcome &o = m_record.outcome();
        m_record.log().attemptFailed(m_attempt, m_timedOut, o.peer, o.logDetail);
        // The old call is finishing inside its own callback: let the event loop delete it
        // (none when it failed inside start(): the transport drops it).
        if (m_call)
            m_call.release()->deleteLater();
        enter(Phase::WaitingForHead);
        launch();
        return;
    }
    enter(Phase::Done);
    m_record.answerUpstreamFailure(m_writer, failed, m_timedOut, QStringLiteral("request"));
}

void ForwardExchange::onTimeout()
{
    if (m_phase != Phase::WaitingForHead || !m_call || m_call->headArrived())
        return;
    m_timedOut = true;
    m_call->abort(); // finished() follows, synchronously or soon
}

void ForwardExchange::onClientGone()
{
    if (m_phase != Phase::Done) {
        // nginx's code for "client closed the request", where it had no head yet (an
        // aggregate route's client waits for the whole stream before it gets one).
        if (m_phase != Phase::Relaying)
            m_record.outcome().status = 499;
        end(Ending::ClientGone);
    }
    stopCall(); // even after a complete answer: nobody reads what the call still has
}

void ForwardExchange::startWatch(bool keepalive)
{
    m_watch = StreamWatch::create(m_route.streamIdleTimeout, m_route.sseKeepalive, keepalive, this);
    if (m_watch) {
        connect(m_watch, &StreamWatch::stalled, this, &ForwardExchange::onStalled);
        connect(m_watch, &StreamWatch::keepaliveDue, this, &ForwardExchange::onKeepaliveDue);
    }
}

void ForwardExchange::onStalled()
{
    if (m_phase == Phase::Done || !m_writer || m_upstreamFinished)
        return;
    if (m_call->bytesAvailable() > 0) {
        // Bytes wait for a slow client (backpressure): the upstream is not the silent one.
        m_watch->upstreamActivity();
        return;
    }
    m_context.metrics.add(metric::streamIdleTimeouts, m_route.labels);
    m_record.outcome().what = QStringLiteral("stream idle %1 after %2 bytes")
                                  .arg(m_route.streamIdleTimeoutText)
                                  .arg(m_upstreamBytes);
    if (m_phase == Phase::Aggregating) // nothing was sent yet: a 502, the call aborted
        return answerAggregateFailure(Ending::IdleTimeout,
                                      AggregateAnswer::stalledBody(m_plan.requestId));
    end(Ending::IdleTimeout);
    stopCall(); // closes the upstream connection: a wedged worker holds nothing of ours
    m_writer->breakConnection(); // chunked: no last chunk; Content-Length: short; then closed
}

void ForwardExchange::onKeepaliveDue()
{
    // Skipped while the client is backed up or bytes wait: the next tick tries again.
    if (m_phase != Phase::Relaying || !m_writer || m_call->bytesAvailable() > 0 ||
        !m_writer->isWritable())
        return;
    m_writer->writeBody(kKeepaliveComment.toByteArray());
    m_context.metrics.add(metric::sseKeepalives, m_route.labels);
}

} // namespace slp
