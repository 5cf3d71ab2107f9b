// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/requestframer.h"

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
    return Verdict::HeadComplete;
}

RequestFramer::Verdict RequestFramer::feedBody(QByteArrayView bytes)
{
    if (!m_chunked || bytes.isEmpty())
        return Verdict::NeedMore;
    const auto result = m_chunked->feed(bytes);
    if (result == ChunkedBodyValidator::Result::Error)
        return reject(400, "malformed chunked body: " + m_chunked->error());
    // Framing counts too: size lines and extensions are bytes the client made SLP read.
    if (m_chunked->wireBytes() > m_limits.maxBodyBytes)
        return reject(413, "request body too large");
    if (result == ChunkedBodyValidator::Result::Done) {
        m_head.bodyBytes = m_chunked->dataBytes();
        m_chunked.reset(); // what follows is the next request, checked when Qt gets to it
        return Verdict::BodyComplete;
    }
    return Verdict::NeedMore;
}

} // namespace slp
