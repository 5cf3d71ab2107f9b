// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace slp {

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
    // is the next request). With `payload`, the chunks' data is appended to it: the body
    // decoded as it arrives.
    Result feed(QByteArrayView data, qsizetype *consumed = nullptr, QByteArray *payload = nullptr);
    qint64 dataBytes() const { return m_dataBytes; } // chunk payload so far
    // Every body byte so far, framing included (after an Error: those before the bad byte).
    qint64 wireBytes() const { return m_wireBytes; }
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
    bool isOver() const { return m_state == State::Done || m_state == State::Error; }
    bool inSizeLine() const;
    // One byte of framing in the current state; false after fail().
    bool step(char c);
    bool sizeDigit(char c);
    bool afterSize(char c);
    // `c` must be `expected`: then the state is `next`.
    bool expect(char c, char expected, const char *why, State next);
    // The size line's CRLF is read: a chunk's data, or the end of the body.
    void endSizeLine();
    // Chunk data: as much of `available` as the chunk still has; returns how much it took.
    qint64 takeData(qint64 available);
    bool fail(const char *why);

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
