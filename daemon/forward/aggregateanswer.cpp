// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/aggregateanswer.h"

#include "aggregate/sseaggregator.h"
#include "forward/exchangerecord.h"
#include "forward/forwardheaders.h"
#include "http/errorbody.h"

namespace slp {

namespace {
constexpr qint64 kReadPiece = 64 * 1024;
} // namespace

AggregateAnswer::AggregateAnswer(ForwardPlan::Aggregate kind, HeaderList upstreamHeaders,
                                 qint64 maxAnswerBytes)
    : m_aggregator(std::make_unique<SseAggregator>(kind == ForwardPlan::Aggregate::Chat
                                                       ? SseAggregator::Kind::Chat
                                                       : SseAggregator::Kind::Completion,
                                                   maxAnswerBytes)),
      m_upstreamHeaders(std::move(upstreamHeaders)), m_maxAnswerBytes(maxAnswerBytes)
{}

AggregateAnswer::~AggregateAnswer() = default;

qint64 AggregateAnswer::read(UpstreamCall &call)
{
    qint64 total = 0;
    while (call.bytesAvailable() > 0 && !decided()) {
        const QByteArray piece = call.read(kReadPiece);
        if (piece.isEmpty())
            break;
        total += piece.size();
        m_aggregator->feed(piece);
    }
    return total;
}

bool AggregateAnswer::decided() const
{
    return m_aggregator->state() != SseAggregator::State::Streaming;
}

void AggregateAnswer::endOfInput(bool clean)
{
    m_lost = !clean;
    if (clean)
        m_aggregator->finishInput();
}

bool AggregateAnswer::succeeded() const
{
    return m_aggregator->state() == SseAggregator::State::Done;
}

ResponseHead AggregateAnswer::head(const ExchangeRecord &record) const
{
    ResponseHead out;
    for (const auto &header : prepareClientHeaders(m_upstreamHeaders)) {
        if (equalsNoCase(header.first, "content-type") ||
            equalsNoCase(header.first, "cache-control"))
            continue; // they described the stream, not this answer
        out.headers.append(header);
    }
    record.addRequestId(out.headers);
    out.headers.append({QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")});
    return out;
}

QByteArray AggregateAnswer::body() const
{
    return m_aggregator->result();
}

QByteArray AggregateAnswer::failureBody(const QByteArray &requestId) const
{
    if (m_aggregator->state() == SseAggregator::State::UpstreamError)
        return m_aggregator->errorJson();
    if (m_aggregator->outputTooLarge())
        return openAiErrorJson(
            QStringLiteral("the reassembled answer is larger than max_body_bytes (%1 bytes; "
                           "request id: %2)")
                .arg(m_maxAnswerBytes)
                .arg(QString::fromLatin1(requestId)),
            QStringLiteral("upstream_error"), "upstream_answer_too_large");
    return openAiErrorJson(
        QStringLiteral("upstream stream ended before completion (request id: %1)")
            .arg(QString::fromLatin1(requestId)),
        QStringLiteral("upstream_error"), "upstream_incomplete");
}

QString AggregateAnswer::failureReason(const UpstreamCall &call) const
{
    if (m_aggregator->state() == SseAggregator::State::UpstreamError)
        return QStringLiteral("the upstream sent an error event mid-stream");
    return m_lost ? QStringLiteral("upstream connection lost: ") + call.errorDetail()
                  : m_aggregator->malformedReason();
}

QString AggregateAnswer::failureWhat() const
{
    if (m_aggregator->state() == SseAggregator::State::UpstreamError)
        return QStringLiteral("the upstream sent an error event mid-stream");
    if (m_aggregator->outputTooLarge())
        return QStringLiteral("reassembled answer larger than max_body_bytes");
    return m_lost ? QStringLiteral("upstream closed mid-stream")
                  : QStringLiteral("stream ended before data: [DONE]");
}

QByteArray AggregateAnswer::stalledBody(const QByteArray &requestId)
{
    return openAiErrorJson(QStringLiteral("upstream stream stalled (request id: %1)")
                               .arg(QString::fromLatin1(requestId)),
                           QStringLiteral("upstream_error"), "upstream_stalled");
}

} // namespace slp
