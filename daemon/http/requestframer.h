// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/chunkedbody.h"
#include "http/requesthead.h"

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

namespace slp {

// One connection's current request, byte by byte, as the reads bring it: the head (at most
// its limit, however much a read holds), then the body's framing. Pure, so that its verdict
// is tested and fuzzed with the bytes split at every point: the connection feeds each read
// through feedHead() until the head is complete, then the rest of that read and every later
// one through feedBody().
class RequestFramer
{
public:
    enum class Verdict
    {
        NeedMore,
        HeadComplete, // head() is valid; feedBody() takes what follows
        BodyComplete, // the chunked body ended (the rest is the next request)
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
    // A chunked body is validated byte by byte; a Content-Length one only counted.
    bool wantsBodyBytes() const { return m_chunked.has_value(); }
    Verdict feedBody(QByteArrayView bytes);

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
    int m_errorStatus = 0;
    QByteArray m_errorMessage;
};

} // namespace slp
