// SPDX-License-Identifier: GPL-3.0-or-later
#include "aggregate/sseaggregator.h"

#include <QJsonDocument>

#include <utility>

// The SSE side of the aggregator: bytes in, lines, events, limits. What an event's JSON does
// to the answer being assembled is in sseassembly.cpp.

namespace slp {

namespace {
// Slack for one pending event over the output limit: an event is the output piece plus its
// JSON envelope, so a small limit must not reject the envelope itself.
constexpr qint64 EventSlack = 1024 * 1024;
} // namespace

SseAggregator::SseAggregator(Kind kind, qint64 maxOutputBytes)
    : m_kind(kind), m_maxOutputBytes(maxOutputBytes), m_maxEventBytes(maxOutputBytes + EventSlack)
{}

void SseAggregator::feed(QByteArrayView bytes)
{
    qsizetype pos = 0;
    const qsizetype n = bytes.size();
    while (pos < n && m_state == State::Streaming) {
        if (m_skipLf) {
            m_skipLf = false;
            if (bytes[pos] == '\n') {
                ++pos;
                continue;
            }
        }
        qsizetype end = pos;
        while (end < n && bytes[end] != '\n' && bytes[end] != '\r')
            ++end;
        if (end == n) {
            m_line.append(bytes.sliced(pos));
            checkPending();
            break;
        }
        m_skipLf = bytes[end] == '\r';
        if (m_line.isEmpty()) {
            processLine(bytes.sliced(pos, end - pos));
        } else {
            // the line started in an earlier feed(): only now is it whole (and its UTF-8 too)
            m_line.append(bytes.sliced(pos, end - pos));
            const QByteArray line = std::exchange(m_line, {});
            processLine(line);
        }
        pos = end + 1;
    }
    releaseIfFinished();
}

void SseAggregator::releaseIfFinished()
{
    if (m_state == State::Streaming)
        return;
    // nothing more will be read; what the result does not need can go now
    m_line = {};
    m_data = {};
    if (m_state != State::Done) {
        m_top = {};
        m_choices.clear();
        m_usage = QJsonValue::Null;
    }
}

void SseAggregator::finishInput()
{
    if (m_state != State::Streaming)
        return;
    // Lenient about a missing final line terminator or blank line: a complete "[DONE]" or error
    // event at EOF still counts; a truncated JSON event lands on the [DONE] check below.
    if (!m_line.isEmpty()) {
        const QByteArray line = std::exchange(m_line, {});
        processLine(line);
    }
    if (m_state == State::Streaming && m_hasData) {
        const QByteArray data = std::exchange(m_data, {});
        m_hasData = false;
        if (data.trimmed() == "[DONE]" || QJsonDocument::fromJson(data).isObject())
            handleEvent(data);
    }
    if (m_state == State::Streaming)
        setMalformed(QStringLiteral("stream ended before data: [DONE]"));
    releaseIfFinished();
}

bool SseAggregator::checkPending()
{
    if (m_line.size() + m_data.size() > m_maxEventBytes) {
        setMalformed(QStringLiteral("an SSE event exceeds %1 bytes").arg(m_maxEventBytes));
        return false;
    }
    return true;
}

void SseAggregator::processLine(QByteArrayView line)
{
    if (m_atStart) {
        m_atStart = false;
        if (line.startsWith("\xEF\xBB\xBF"))
            line = line.sliced(3);
    }
    if (line.isEmpty()) {
        dispatchEvent();
        return;
    }
    if (line.front() == ':')
        return; // comment / keep-alive
    const qsizetype colon = line.indexOf(':');
    const QByteArrayView field = colon < 0 ? line : line.first(colon);
    QByteArrayView value = colon < 0 ? QByteArrayView() : line.sliced(colon + 1);
    if (value.startsWith(' '))
        value = value.sliced(1);
    if (field == "error") {
        // Not SSE, but llama.cpp's server reports a failure mid-stream as one `error: {...}`
        // line (and then ends without [DONE]); the object is the error itself.
        const QJsonDocument doc = QJsonDocument::fromJson(value.toByteArray());
        const QJsonValue inner = doc.object().value(QLatin1String("error"));
        m_error = inner.isObject() ? inner
                  : doc.isObject() ? QJsonValue(doc.object())
                                   : QJsonValue(QString::fromUtf8(value));
        m_state = State::UpstreamError;
        return;
    }
    if (field != "data")
        return; // event:, id:, retry: and unknown fields do not affect the body
    if (m_hasData)
        m_data.append('\n');
    m_data.append(value);
    m_hasData = true;
    checkPending();
}

void SseAggregator::dispatchEvent()
{
    if (!m_hasData)
        return;
    const QByteArray data = std::exchange(m_data, {});
    m_hasData = false;
    handleEvent(data);
}

void SseAggregator::setMalformed(const QString &reason)
{
    // not freed here: callers may still hold references into m_choices (releaseIfFinished)
    m_state = State::Malformed;
    m_malformedReason = reason;
}

void SseAggregator::charge(qint64 bytes)
{
    m_outputBytes += bytes;
    if (m_state == State::Streaming && m_outputBytes > m_maxOutputBytes) {
        m_outputTooLarge = true;
        setMalformed(QStringLiteral("reassembled output exceeds %1 bytes").arg(m_maxOutputBytes));
    }
}

} // namespace slp
