// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/chunkedbody.h"
#include "http/requesthead.h"

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

namespace slp {

// One connection's current request, byte by byte, as the reads bring it: the head (at most
// its limit, however much a read holds), then the body, into the one buffer the request
// keeps (a Content-Length body's is sized once; a chunked body is decoded into one that
// grows geometrically). Pure, so that its verdict is tested and fuzzed with the bytes split at
// every point: the connection feeds each read through feedHead() until the head is complete,
// then the rest through feedBody(), or writes a Content-Length body straight into
// bodyWindow() and reports it with bodyWritten().
class RequestFramer
{
public:
    enum class Verdict
    {
        NeedMore,
        HeadComplete, // head() is valid; feedBody() takes what follows
        BodyComplete, // the body ended (the rest is the next request): takeBody()
        Rejected,     // errorStatus() / errorMessage()
    };

    explicit RequestFramer(const RequestHeadLimits &limits = {});
    // The next bytes start a new request.
    void reset();

    bool inHead() const { return !m_headDone; }
    // How many more bytes the head may take: pass at most this many to feedHead().
    qsizetype headRoom() const;
    // New bytes while inHead(). On HeadComplete, `headBytes` says how many of `bytes` were
    // head: the rest belongs to the body (and goes to feedBody(), when wantsBodyBytes()).
    Verdict feedHead(QByteArrayView bytes, qsizetype *headBytes);
    // After the head: whether body bytes are still to come.
    bool wantsBodyBytes() const { return m_headDone && !m_bodyDone; }
    bool isChunked() const { return m_chunked.has_value(); }
    // A Content-Length body's bytes still to come (0 for chunked: its length is unknown).
    qint64 bodyRemaining() const;
    // Body bytes from the wire: a chunked body is validated and decoded, a Content-Length
    // one copied; `consumed` gets how many of `bytes` belong to this request.
    Verdict feedBody(QByteArrayView bytes, qsizetype *consumed = nullptr);
    // A Content-Length body's next `n` bytes (n <= bodyRemaining()) are written here by the
    // caller, straight from the socket; then bodyWritten(written).
    char *bodyWindow();
    Verdict bodyWritten(qint64 n);
    // Body bytes held so far (a chunked body's decoded payload).
    qint64 decodedBytes() const { return m_chunked ? m_body.size() : m_filled; }
    // The decoded body, once BodyComplete (empty for a request without one).
    QByteArray takeBody() { return std::move(m_body); }
    // The body bytes read so far, in place.
    QByteArrayView bodySoFar() const
    {
        return {m_body.constData(), m_bodyDone ? m_head.bodyBytes : decodedBytes()};
    }

    const RequestHead &head() const { return m_head; }
    RequestHead takeHead() { return std::move(m_head); }
    int errorStatus() const { return m_errorStatus; }
    QByteArray errorMessage() const { return m_errorMessage; }

private:
    Verdict reject(int status, QByteArray message);

    RequestHeadLimits m_limits;
    QByteArray m_accumulated; // head bytes so far
    RequestHead m_head;
    bool m_headDone = false;
    std::optional<ChunkedBodyValidator> m_chunked;
    QByteArray m_body;   // the one copy of the body: sized once, or grown by chunks
    qint64 m_filled = 0; // of a Content-Length body
    bool m_bodyDone = false;
    int m_errorStatus = 0;
    QByteArray m_errorMessage;
};

} // namespace slp
