// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

namespace slp {

// SLP's own strict reading of a client's request head. QtHttpServer 6.4 parses leniently and
// enforces no limits (docs/QT64.md), so every connection's bytes are read here first: this
// decides 400/413/414/431/505 before QtHttpServer buffers anything, and keeps what Qt drops
// (the raw target, the HTTP version, repeated headers in order).
struct RequestHeadLimits
{
    qint64 maxHeaderBytes = 64 * 1024;
    qint64 maxBodyBytes = 64ll << 20;
};

struct RequestHead
{
    enum class State
    {
        Incomplete,
        Complete,
        Rejected
    };
    State state = State::Incomplete;

    // Rejected: the status to answer (400, 413, 414, 431, 501, 505) and why.
    int errorStatus = 0;
    QByteArray errorMessage;

    qsizetype headLength = 0; // bytes up to and including the blank line
    QByteArray method;
    QByteArray target;                            // exactly as sent: path and query verbatim
    int versionMinor = 1;                         // HTTP/1.x
    QList<QPair<QByteArray, QByteArray>> headers; // in order, repeats kept, values trimmed
    qint64 contentLength = -1;                    // -1 when absent
    bool chunked = false;
    bool expectContinue = false;
    bool keepAlive = true; // after this request, by version, Connection and framing
    qint64 bodyBytes = -1; // set by the connection: body bytes its own parse framed

    QByteArray header(QByteArrayView name) const; // first value, case-insensitive
};

// Reads the head at the start of `data` (the client's unconsumed bytes). Incomplete until the
// blank line has arrived; Rejected as soon as the bytes seen so far break a rule.
RequestHead parseRequestHead(QByteArrayView data, const RequestHeadLimits &limits);

// RFC 9110 token characters (header names, methods).
bool isTokenChar(char c);

// Follows a chunked request body as its bytes arrive (RFC 9112 7.1), so a malformed one is
// refused before Qt's lenient parser reads a bad size as 0 and takes what follows for a new
// request (request smuggling), and so the body's real size is known for the 413. Trailer
// fields are refused (Qt would read them as a request); a size line may be 4 KiB at most.
// The verdict never depends on how the bytes were split between calls.
class ChunkedBodyValidator
{
public:
    enum class Result
    {
        NeedMore,
        Done,
        Error
    };

    // Consumes body bytes; `consumed` gets how many belong to the body (after Done, the rest
    // is the next request).
    Result feed(QByteArrayView data, qsizetype *consumed = nullptr);
    qint64 dataBytes() const { return m_dataBytes; } // chunk payload so far
    qint64 wireBytes() const { return m_wireBytes; } // every body byte so far, framing included
    static constexpr qsizetype kMaxSizeLineBytes = 4096;
    QByteArray error() const { return m_error; }

private:
    enum class State
    {
        Size,
        SizeSpace,
        Extension,
        SizeLf,
        Data,
        DataCr,
        DataLf,
        TrailerStart,
        FinalLf,
        Done,
        Error
    };
    Result fail(const char *why);
    State m_state = State::Size;
    int m_digits = 0;
    qint64 m_size = 0;
    qint64 m_remaining = 0;
    qint64 m_dataBytes = 0;
    qint64 m_wireBytes = 0;
    qsizetype m_lineBytes = 0; // bytes of the current size line
    QByteArray m_error;
};

} // namespace slp
