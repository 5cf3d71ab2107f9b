// SPDX-License-Identifier: GPL-3.0-or-later
// The JSON body scanner's tokens: strings (resumable mid-string), numbers and literals.
#include "jsonscanner_p.h"

#include <cstring>

namespace slp::jsonscan {

using namespace jsontext;

Scanner::Step Scanner::unexpected(qsizetype pos)
{
    if (pos >= m_n)
        return endOfBytes(QStringLiteral("unexpected end of input at byte %1").arg(pos));
    const uchar c = uchar(m_p[pos]);
    if (c >= 0x21 && c < 0x7f)
        return fail(QStringLiteral("unexpected '%1' at byte %2").arg(QChar(c)).arg(pos));
    return fail(
        QStringLiteral("unexpected byte 0x%1 at byte %2").arg(c, 2, 16, QLatin1Char('0')).arg(pos));
}

// pos is at a backslash inside the string that opened at `start`; on Ok it is past the
// escape, on NeedMore (the escape is not all there yet) it has not moved.
Scanner::Step Scanner::scanEscape(qsizetype &pos, qsizetype start)
{
    if (pos + 1 >= m_n) {
        if (!m_final)
            return Step::NeedMore;
        return fail(QStringLiteral("unterminated string starting at byte %1").arg(start));
    }
    switch (m_p[pos + 1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
        pos += 2;
        return Step::Ok;
    case 'u':
        if (pos + 6 > m_n && !m_final)
            return Step::NeedMore;
        if (pos + 6 > m_n || hexValue(m_p[pos + 2]) < 0 || hexValue(m_p[pos + 3]) < 0 ||
            hexValue(m_p[pos + 4]) < 0 || hexValue(m_p[pos + 5]) < 0)
            return fail(QStringLiteral("invalid \\u escape at byte %1").arg(pos));
        pos += 6;
        return Step::Ok;
    default:
        return fail(QStringLiteral("invalid escape at byte %1").arg(pos));
    }
}

// pos is at the opening quote; on Ok it is one past the closing quote. A string cut by the
// end of the bytes so far keeps how far it was read (m_string), up to the start of an escape
// or UTF-8 sequence that is not all there yet, and the retried step resumes from there.
Scanner::Step Scanner::scanString(qsizetype &pos, bool &hasEscapes)
{
    const qsizetype start = pos;
    if (m_string.open == start) {
        hasEscapes = m_string.escapes;
        if (m_string.end >= 0) {
            pos = m_string.end;
            return Step::Ok;
        }
        pos = m_string.resumeAt;
    } else {
        ++pos;
    }
    const auto waitAt = [&](qsizetype at) {
        m_string = {start, at, -1, hasEscapes};
        return Step::NeedMore;
    };
    const auto unterminated = [&] {
        return fail(QStringLiteral("unterminated string starting at byte %1").arg(start));
    };
    for (;;) {
        pos = skipPlain(m_p, pos, m_n);
        if (pos >= m_n)
            return m_final ? unterminated() : waitAt(pos);
        const uchar c = uchar(m_p[pos]);
        if (c == '"') {
            ++pos;
            m_string = {start, pos, pos, hasEscapes}; // a retry of this step skips it
            return Step::Ok;
        }
        if (c == '\\') {
            hasEscapes = true;
            const Step step = scanEscape(pos, start);
            if (step == Step::NeedMore)
                return waitAt(pos);
            if (step == Step::Fail)
                return step;
            continue;
        }
        if (c < 0x20)
            return fail(QStringLiteral("control character 0x%1 in string at byte %2")
                            .arg(c, 2, 16, QLatin1Char('0'))
                            .arg(pos));
        const auto *u = reinterpret_cast<const uchar *>(m_p);
        // A sequence is at most 4 bytes: with fewer there, it is judged when more come.
        if (m_n - pos < 4 && !m_final)
            return waitAt(pos);
        // Inline the common well-formed cases (accented Latin, CJK); the rest is checked in full.
        if (c >= 0xE1 && c <= 0xEC && pos + 2 < m_n && (u[pos + 1] & 0xC0) == 0x80 &&
            (u[pos + 2] & 0xC0) == 0x80) {
            pos += 3;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF && pos + 1 < m_n && (u[pos + 1] & 0xC0) == 0x80) {
            pos += 2;
            continue;
        }
        // Per Unicode table 3-7: no overlong forms, no encoded surrogates, nothing above
        // U+10FFFF.
        const qsizetype len = utf8SequenceLength(u, pos, m_n);
        if (len == 0)
            return fail(QStringLiteral("invalid UTF-8 in string at byte %1").arg(pos));
        pos += len;
    }
}

// RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
// A number that reaches the end of the bytes so far may go on: it waits for more.
Scanner::Step Scanner::scanNumber(qsizetype &pos)
{
    const qsizetype start = pos;
    const auto invalid = [&] {
        return fail(QStringLiteral("invalid number at byte %1").arg(start));
    };
    const auto digitNext = [&]() -> Step {
        if (pos >= m_n)
            return m_final ? invalid() : Step::NeedMore;
        return isDigit(m_p[pos]) ? Step::Ok : invalid();
    };
    if (m_p[pos] == '-')
        ++pos;
    if (const Step s = digitNext(); s != Step::Ok)
        return s;
    if (m_p[pos] == '0') {
        ++pos;
        if (pos < m_n && isDigit(m_p[pos]))
            return fail(QStringLiteral("leading zero in number at byte %1").arg(start));
    } else {
        while (pos < m_n && isDigit(m_p[pos]))
            ++pos;
    }
    if (pos < m_n && m_p[pos] == '.') {
        ++pos;
        if (const Step s = digitNext(); s != Step::Ok)
            return s;
        while (pos < m_n && isDigit(m_p[pos]))
            ++pos;
    }
    if (pos < m_n && (m_p[pos] == 'e' || m_p[pos] == 'E')) {
        ++pos;
        if (pos < m_n && (m_p[pos] == '+' || m_p[pos] == '-'))
            ++pos;
        if (const Step s = digitNext(); s != Step::Ok)
            return s;
        while (pos < m_n && isDigit(m_p[pos]))
            ++pos;
    }
    return pos >= m_n && !m_final ? Step::NeedMore : Step::Ok;
}

Scanner::Step Scanner::scanLiteral(qsizetype &pos, const char *lit, qsizetype len)
{
    if (pos + len > m_n && !m_final)
        return Step::NeedMore;
    if (pos + len > m_n || std::memcmp(m_p + pos, lit, size_t(len)) != 0)
        return fail(QStringLiteral("invalid literal at byte %1").arg(pos));
    pos += len;
    return Step::Ok;
}

} // namespace slp::jsonscan
