// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/requestframer.h"

#include <cstring>

namespace slp {

namespace {
// Beyond the head limit, room to see the blank line that would end a head at the limit.
constexpr qsizetype kHeadMargin = 8192;
} // namespace

RequestFramer::RequestFramer(const RequestHeadLimits &limits) : m_limits(limits)
{}

void RequestFramer::reset()
{
    m_accumulated.clear();
    m_head = RequestHead();
    m_headDone = false;
    m_chunked.reset();
    m_body = QByteArray();
    m_filled = 0;
    m_bodyDone = false;
    m_errorStatus = 0;
    m_errorMessage.clear();
}

qsizetype RequestFramer::headRoom() const
{
    return std::max<qsizetype>(0, m_limits.maxHeaderBytes + kHeadMargin - m_accumulated.size());
}

RequestFramer::Verdict RequestFramer::reject(int status, QByteArray message)
{
    m_errorStatus = status;
    m_errorMessage = std::move(message);
    return Verdict::Rejected;
}

RequestFramer::Verdict RequestFramer::feedHead(QByteArrayView bytes, qsizetype *headBytes)
{
    const qsizetype before = m_accumulated.size();
    m_accumulated += bytes.first(std::min(bytes.size(), headRoom()));
    RequestHead head = parseRequestHead(m_accumulated, m_limits);
    if (head.state == RequestHead::State::Rejected)
        return reject(head.errorStatus, head.errorMessage);
    if (head.state == RequestHead::State::Incomplete) {
        if (headRoom() == 0)
            return reject(431, "request header fields too large");
        return Verdict::NeedMore;
    }
    *headBytes = head.headLength - before;
    m_head = std::move(head);
    m_headDone = true;
    m_accumulated.clear();
    if (m_head.chunked)
        m_chunked.emplace();
    else
        m_head.bodyBytes = std::max<qint64>(0, m_head.contentLength);
    m_bodyDone = !m_chunked && m_head.bodyBytes == 0;
    return Verdict::HeadComplete;
}

qint64 RequestFramer::bodyRemaining() const
{
    return m_chunked || !m_headDone ? 0 : m_head.bodyBytes - m_filled;
}

char *RequestFramer::bodyWindow()
{
    // Allocated once the first body byte is about to arrive, not at the head: a body that
    // waits for memory (the connection's budget) holds none meanwhile.
    if (m_body.size() != m_head.bodyBytes)
        m_body = QByteArray(m_head.bodyBytes, Qt::Uninitialized);
    return m_body.data() + m_filled;
}

RequestFramer::Verdict RequestFramer::bodyWritten(qint64 n)
{
    m_filled += n;
    if (m_filled < m_head.bodyBytes)
        return Verdict::NeedMore;
    m_bodyDone = true;
    return Verdict::BodyComplete;
}

RequestFramer::Verdict RequestFramer::feedBody(QByteArrayView bytes, qsizetype *consumed)
{
    if (consumed)
        *consumed = 0;
    if (!wantsBodyBytes() || bytes.isEmpty())
        return Verdict::NeedMore;
    if (!m_chunked) {
        const qint64 n = std::min<qint64>(bytes.size(), bodyRemaining());
        std::memcpy(bodyWindow(), bytes.data(), size_t(n));
        if (consumed)
            *consumed = qsizetype(n);
        return bodyWritten(n);
    }
    qsizetype used = 0;
    const auto result = m_chunked->feed(bytes, &used, &m_body);
    if (consumed)
        *consumed = used;
    if (result == ChunkedBodyValidator::Result::Error)
        return reject(400, "malformed chunked body: " + m_chunked->error());
    // Framing counts too: size lines and extensions are bytes the client made SLP read.
    if (m_chunked->wireBytes() > m_limits.maxBodyBytes)
        return reject(413, "request body too large");
    if (result == ChunkedBodyValidator::Result::Done) {
        m_head.bodyBytes = m_chunked->dataBytes();
        m_chunked.reset();
        m_bodyDone = true;
        return Verdict::BodyComplete;
    }
    return Verdict::NeedMore;
}

} // namespace slp
