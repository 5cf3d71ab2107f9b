// SPDX-License-Identifier: GPL-3.0-or-later
#include "aggregate/sseaggregator.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <utility>

namespace slp {

namespace {
// Slack for one pending event over the output limit: an event is the output piece plus its
// JSON envelope, so a small limit must not reject the envelope itself.
constexpr qint64 EventSlack = 1024 * 1024;

QString preview(const QByteArray &data)
{
    const QByteArray head = data.left(80);
    QString s = QString::fromUtf8(head);
    for (QChar &ch : s)
        if (ch.unicode() < 0x20)
            ch = u' ';
    return data.size() > 80 ? s + QStringLiteral("...") : s;
}
} // namespace

SseAggregator::SseAggregator(Kind kind, qint64 maxOutputBytes)
    : m_reader(maxOutputBytes + EventSlack), m_answer(kind, maxOutputBytes)
{}

void SseAggregator::feed(QByteArrayView bytes)
{
    if (m_state != State::Streaming)
        return;
    m_reader.feed(bytes, [this](const SseEventReader::Event &e) { return onEvent(e); });
    checkEventLimit();
    releaseIfFinished();
}

void SseAggregator::finishInput()
{
    if (m_state != State::Streaming)
        return;
    // Lenient about a missing final line terminator or blank line: a complete "[DONE]" or error
    // event at EOF still counts; a truncated JSON event lands on the [DONE] check below.
    QByteArray pending;
    m_reader.finish([this](const SseEventReader::Event &e) { return onEvent(e); }, &pending);
    checkEventLimit();
    if (m_state == State::Streaming && !pending.isNull() &&
        (pending.trimmed() == "[DONE]" || QJsonDocument::fromJson(pending).isObject()))
        handleEvent(pending);
    if (m_state == State::Streaming)
        setMalformed(QStringLiteral("stream ended before data: [DONE]"));
    releaseIfFinished();
}

// An event the reader had to cut short ends the answer as malformed, whichever call found it.
void SseAggregator::checkEventLimit()
{
    if (m_reader.overLimit() && m_state == State::Streaming)
        setMalformed(QStringLiteral("an SSE event exceeds %1 bytes").arg(m_reader.maxEventBytes()));
}

bool SseAggregator::onEvent(const SseEventReader::Event &event)
{
    if (!event.errorLine) {
        handleEvent(event.data);
        return m_state == State::Streaming;
    }
    // Not SSE, but llama.cpp's server reports a failure mid-stream as one `error: {...}` line
    // (and then ends without [DONE]); the object is the error itself.
    const QJsonDocument doc = QJsonDocument::fromJson(event.data);
    const QJsonValue inner = doc.object().value(QLatin1String("error"));
    m_error = inner.isObject() ? inner
              : doc.isObject() ? QJsonValue(doc.object())
                               : QJsonValue(QString::fromUtf8(event.data));
    m_state = State::UpstreamError;
    return false;
}

void SseAggregator::handleEvent(const QByteArray &data)
{
    ++m_eventCount;
    const QByteArray trimmed = data.trimmed();
    if (trimmed.isEmpty())
        return; // "data:" with nothing: a keep-alive in all but name
    if (trimmed == "[DONE]") {
        m_state = State::Done;
        return;
    }
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(data, &err);
    if (err.error != QJsonParseError::NoError) {
        return setMalformed(QStringLiteral("event %1: data is not JSON (%2 at offset %3): %4")
                                .arg(m_eventCount)
                                .arg(err.errorString())
                                .arg(err.offset)
                                .arg(preview(data)));
    }
    if (!doc.isObject()) {
        return setMalformed(QStringLiteral("event %1: data is not a JSON object: %2")
                                .arg(m_eventCount)
                                .arg(preview(data)));
    }
    const QJsonObject obj = doc.object();
    // In-band error: {"error":{...}} (vLLM, OpenAI) or a bare {"object":"error",...} (older vLLM)
    const QJsonValue error = obj.value(QLatin1String("error"));
    if (!error.isNull() && !error.isUndefined()) {
        m_error = error;
        m_state = State::UpstreamError;
        return;
    }
    if (obj.value(QLatin1String("object")).toString() == QLatin1String("error")) {
        m_error = obj;
        m_state = State::UpstreamError;
        return;
    }
    if (!m_answer.apply(obj, m_eventCount)) {
        m_outputTooLarge = m_answer.tooLarge();
        setMalformed(m_answer.failure());
    }
}

void SseAggregator::releaseIfFinished()
{
    if (m_state == State::Streaming)
        return;
    // nothing more will be read; what the result does not need can go now
    m_reader.release();
    if (m_state != State::Done)
        m_answer.clear();
}

void SseAggregator::setMalformed(const QString &reason)
{
    m_state = State::Malformed;
    m_malformedReason = reason;
}

QByteArray SseAggregator::result() const
{
    return m_state == State::Done ? m_answer.result() : QByteArray();
}

QByteArray SseAggregator::errorJson() const
{
    if (m_state != State::UpstreamError)
        return {};
    QJsonObject body;
    if (m_error.isObject()) {
        body.insert(QLatin1String("error"), m_error);
    } else {
        // {"error":"text"}: give the client the usual object shape
        QJsonObject error;
        if (m_error.isString()) {
            error.insert(QLatin1String("message"), m_error);
        } else {
            error.insert(QLatin1String("message"), QStringLiteral("upstream error"));
            error.insert(QLatin1String("detail"), m_error);
        }
        body.insert(QLatin1String("error"), error);
    }
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

} // namespace slp
