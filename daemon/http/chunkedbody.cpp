// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/chunkedbody.h"

#include "wire/hex.h"

#include <algorithm>

namespace slp {

ChunkedBodyValidator::Result ChunkedBodyValidator::feed(QByteArrayView data, qsizetype *consumed,
                                                        QByteArray *payload)
{
    qsizetype i = 0;
    while (i < data.size() && !isOver()) {
        // A size line (digits, spaces, extensions) is bounded on its own: every byte a client
        // sends counts against a limit.
        if (inSizeLine() && ++m_lineBytes > kMaxSizeLineBytes) {
            fail("chunk size line longer than 4 KiB");
            break;
        }
        if (m_state == State::Data) {
            const qint64 taken = takeData(data.size() - i);
            if (payload)
                payload->append(data.sliced(i, taken));
            i += taken;
        } else if (step(data[i]))
            ++i;
    }
    m_wireBytes += i;
    if (m_state == State::Error)
        return Result::Error;
    if (consumed)
        *consumed = i;
    return m_state == State::Done ? Result::Done : Result::NeedMore;
}

bool ChunkedBodyValidator::inSizeLine() const
{
    return m_state == State::Size || m_state == State::SizeSpace || m_state == State::Extension;
}

bool ChunkedBodyValidator::step(char c)
{
    switch (m_state) {
    case State::Size:
        return sizeDigit(c);
    case State::SizeSpace:
        return afterSize(c);
    case State::Extension:
        if (c == '\n' || c == '\0')
            return fail("bad chunk extension");
        if (c == '\r')
            m_state = State::SizeLf;
        return true;
    case State::SizeLf:
        if (!expect(c, '\n', "chunk size line must end with CRLF", State::Data))
            return false;
        endSizeLine();
        return true;
    case State::DataCr:
        return expect(c, '\r', "chunk data longer than its size", State::DataLf);
    case State::DataLf:
        m_digits = 0;
        m_size = 0;
        m_lineBytes = 0;
        return expect(c, '\n', "chunk data must end with CRLF", State::Size);
    case State::TrailerStart:
        // QtHttpServer 6.4 calls the body done two bytes after the last chunk, so a trailer
        // field would be read as the next request (docs/QT64.md): refused, never parsed.
        return expect(c, '\r', "trailer fields are not accepted", State::FinalLf);
    case State::FinalLf:
        return expect(c, '\n', "chunked body must end with CRLF", State::Done);
    case State::Data:
    case State::Done:
    case State::Error:
        break;
    }
    return false;
}

bool ChunkedBodyValidator::sizeDigit(char c)
{
    if (const int digit = hexValue(c); digit >= 0) {
        if (++m_digits > 15)
            return fail("chunk size too long");
        m_size = m_size * 16 + digit;
        return true;
    }
    if (m_digits == 0 || (c != ' ' && c != '\t' && c != ';' && c != '\r'))
        return fail("chunk size is not hexadecimal");
    return afterSize(c);
}

bool ChunkedBodyValidator::afterSize(char c)
{
    if (c == ';')
        m_state = State::Extension;
    else if (c == '\r')
        m_state = State::SizeLf;
    else if (c == ' ' || c == '\t')
        m_state = State::SizeSpace;
    else
        return fail("junk after chunk size");
    return true;
}

bool ChunkedBodyValidator::expect(char c, char expected, const char *why, State next)
{
    if (c != expected)
        return fail(why);
    m_state = next;
    return true;
}

void ChunkedBodyValidator::endSizeLine()
{
    m_lineBytes = 0;
    if (m_size == 0) {
        m_state = State::TrailerStart;
    } else {
        m_remaining = m_size;
        m_state = State::Data;
    }
}

qint64 ChunkedBodyValidator::takeData(qint64 available)
{
    const qint64 take = std::min(m_remaining, available);
    m_remaining -= take;
    m_dataBytes += take;
    if (m_remaining == 0)
        m_state = State::DataCr;
    return take;
}

bool ChunkedBodyValidator::fail(const char *why)
{
    m_state = State::Error;
    m_error = why;
    return false;
}

} // namespace slp
