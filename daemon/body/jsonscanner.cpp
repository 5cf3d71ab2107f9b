// SPDX-License-Identifier: GPL-3.0-or-later
// The JSON body scan's hot path, in one translation unit so the compiler can inline it: the
// walk over the structure, one step (a token and what it implies) at a time, each undone to
// its checkpoint when it needs bytes that have not arrived yet; and the tokens (strings,
// resumable mid-string; numbers; literals). The steps are declared inline: without it GCC
// kept each a call of its own, and a body of many small tokens scanned 23% slower (45 ms
// against 36 ms for 25 MB, `tst_body_scanner throughput`).
#include "jsonscanner_p.h"

#include <algorithm>
#include <cstring>

namespace slp::jsonscan {

using namespace jsontext;

void Scanner::walk()
{
    for (;;) {
        skipWs(m_pos); // blanks between tokens are never read twice
        m_checkpoint.pos = m_pos;
        m_checkpoint.state = m_state;
        m_checkpoint.depth = m_stack.size();
        m_checkpoint.top = m_stack.isEmpty() ? 0 : m_stack.back();
        m_checkpoint.pendingKey = m_pendingKey;
        m_checkpoint.factsSaved = false;
        Step step = Step::Fail;
        switch (m_state) {
        case State::Value:
            step = value();
            break;
        case State::Key:
            step = key();
            break;
        case State::After:
            step = after();
            break;
        case State::Done:
        case State::Failed:
            return;
        }
        if (step == Step::Ok)
            continue;
        if (step == Step::Fail) {
            m_state = State::Failed;
            return;
        }
        restore();
        // Retried at once when the step's string kept its progress; else once the bytes
        // behind the checkpoint have doubled, so a long number or run of blanks is not
        // re-read on every read.
        m_retryAt = m_n + std::max<qsizetype>(1, m_n - progress());
        return;
    }
}

inline void Scanner::restore()
{
    m_pos = m_checkpoint.pos;
    m_state = m_checkpoint.state;
    if (m_stack.size() > m_checkpoint.depth)
        m_stack.resize(m_checkpoint.depth);
    else if (m_stack.size() < m_checkpoint.depth)
        m_stack.append(m_checkpoint.top);
    m_pendingKey = m_checkpoint.pendingKey;
    if (m_checkpoint.factsSaved)
        m_top = m_checkpoint.facts;
}

inline Scanner::Step Scanner::value()
{
    if (m_pos >= m_n)
        return unexpected(m_pos);
    // Only values of top-level keys are recorded; nested ones are just validated.
    const bool top = m_stack.size() == 1 && m_stack.back() == '{';
    const KeyKind key = top ? m_pendingKey : KeyKind::Other;
    const char c = m_p[m_pos];
    if (c == '{' || c == '[')
        return openContainer(c, key);
    const Step step = scalar(c, key);
    if (step == Step::Ok)
        m_state = State::After;
    return step;
}

inline Scanner::Step Scanner::openContainer(char c, KeyKind key)
{
    if (m_stack.isEmpty() && c == '{') {
        m_checkpoint.facts = m_top;
        m_checkpoint.factsSaved = true;
        m_top.isObject = true;
        m_top.objectOpen = m_pos;
    }
    if (m_stack.size() >= m_maxDepth)
        return fail(QStringLiteral("nesting deeper than %1 at byte %2").arg(m_maxDepth).arg(m_pos));
    m_stack.append(c);
    record(key, ValueKind::Compound, -1, -1); // compound: never spliced
    ++m_pos;
    skipWs(m_pos);
    if (m_pos >= m_n && !m_final)
        return Step::NeedMore; // empty or not: the next byte says
    if (m_pos < m_n && m_p[m_pos] == (c == '{' ? '}' : ']')) {
        m_stack.removeLast();
        ++m_pos;
        m_state = State::After;
    } else {
        m_state = c == '{' ? State::Key : State::Value;
    }
    return Step::Ok;
}

inline Scanner::Step Scanner::scalar(char c, KeyKind key)
{
    const qsizetype begin = m_pos;
    if (c == '"') {
        bool escapes = false;
        const Step step = scanString(m_pos, escapes);
        if (step == Step::Ok)
            record(key, ValueKind::String, begin, m_pos, escapes);
        return step;
    }
    if (c == 't' || c == 'f' || c == 'n') {
        const ValueKind kind = c == 't'   ? ValueKind::True
                               : c == 'f' ? ValueKind::False
                                          : ValueKind::Null;
        const bool isFalse = kind == ValueKind::False;
        const Step step = scanLiteral(m_pos,
                                      c == 't'  ? "true"
                                      : isFalse ? "false"
                                                : "null",
                                      isFalse ? 5 : 4);
        if (step == Step::Ok)
            record(key, kind, begin, m_pos);
        return step;
    }
    if (c == '.')
        return fail(QStringLiteral("invalid number at byte %1").arg(m_pos));
    if (c != '-' && !isDigit(c))
        return unexpected(m_pos);
    const Step step = scanNumber(m_pos);
    if (step == Step::Ok)
        record(key, ValueKind::Number, begin, m_pos);
    return step;
}

inline void Scanner::record(KeyKind key, ValueKind kind, qsizetype begin, qsizetype end,
                            bool escapes)
{
    if (key == KeyKind::Other)
        return;
    if (!m_checkpoint.factsSaved) {
        m_checkpoint.facts = m_top;
        m_checkpoint.factsSaved = true;
    }
    switch (key) {
    case KeyKind::Other:
        return;
    case KeyKind::ModelLookalike:
        m_top.modelLookalike = true;
        return;
    case KeyKind::Model:
        ++m_top.modelCount;
        m_top.modelIsString = kind == ValueKind::String;
        m_top.modelBegin = begin;
        m_top.modelEnd = end;
        m_top.modelEscapes = escapes;
        return;
    case KeyKind::Stream:
        m_top.stream = kind == ValueKind::True    ? BodyScan::Stream::True
                       : kind == ValueKind::False ? BodyScan::Stream::False
                                                  : BodyScan::Stream::Other;
        m_top.streamBegin = begin;
        m_top.streamEnd = end;
        return;
    default: // the logprobs family: any value but false or null asks for them
        m_top.logprobsWanted[int(key) - int(KeyKind::Logprobs)] =
            kind != ValueKind::False && kind != ValueKind::Null;
        return;
    }
}

inline Scanner::Step Scanner::key()
{
    if (m_pos >= m_n || m_p[m_pos] != '"')
        return unexpected(m_pos);
    bool escapes = false;
    const qsizetype begin = m_pos;
    if (const Step step = scanString(m_pos, escapes); step != Step::Ok)
        return step;
    if (m_stack.size() == 1) {
        const char *s = m_p + begin + 1;
        const qsizetype n = m_pos - begin - 2;
        m_pendingKey = escapes ? classifyEscapedKey(s, n) : classifyKey(s, n);
    }
    skipWs(m_pos);
    if (m_pos >= m_n || m_p[m_pos] != ':')
        return unexpected(m_pos);
    ++m_pos;
    skipWs(m_pos);
    m_state = State::Value;
    return Step::Ok;
}

inline Scanner::Step Scanner::after()
{
    skipWs(m_pos);
    if (m_stack.isEmpty()) {
        if (m_pos < m_n)
            return fail(QStringLiteral("trailing data at byte %1").arg(m_pos));
        if (!m_final)
            return Step::NeedMore; // blanks so far; trailing data may still come
        m_state = State::Done;
        return Step::Ok;
    }
    if (m_pos >= m_n)
        return unexpected(m_pos);
    const char open = m_stack.back();
    const char c = m_p[m_pos];
    if (c == ',') {
        ++m_pos;
        skipWs(m_pos);
        m_state = open == '{' ? State::Key : State::Value;
        return Step::Ok;
    }
    if (c == (open == '{' ? '}' : ']')) {
        m_stack.removeLast();
        ++m_pos;
        return Step::Ok;
    }
    return unexpected(m_pos);
}

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
inline Scanner::Step Scanner::scanString(qsizetype &pos, bool &hasEscapes)
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
        const Step step = scanUtf8(pos);
        if (step == Step::NeedMore)
            return waitAt(pos);
        if (step == Step::Fail)
            return step;
    }
}

inline Scanner::Step Scanner::scanUtf8(qsizetype &pos)
{
    const auto *u = reinterpret_cast<const uchar *>(m_p);
    const uchar c = u[pos];
    // A sequence is at most 4 bytes: with fewer there, it is judged when more come.
    if (m_n - pos < 4 && !m_final)
        return Step::NeedMore;
    // Inline the common well-formed cases (accented Latin, CJK); the rest is checked in full.
    if (c >= 0xE1 && c <= 0xEC && pos + 2 < m_n && (u[pos + 1] & 0xC0) == 0x80 &&
        (u[pos + 2] & 0xC0) == 0x80) {
        pos += 3;
        return Step::Ok;
    }
    if (c >= 0xC2 && c <= 0xDF && pos + 1 < m_n && (u[pos + 1] & 0xC0) == 0x80) {
        pos += 2;
        return Step::Ok;
    }
    // Per Unicode table 3-7: no overlong forms, no encoded surrogates, nothing above U+10FFFF.
    const qsizetype len = utf8SequenceLength(u, pos, m_n);
    if (len == 0)
        return fail(QStringLiteral("invalid UTF-8 in string at byte %1").arg(pos));
    pos += len;
    return Step::Ok;
}

// RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
// A number that reaches the end of the bytes so far may go on: it waits for more.
inline Scanner::Step Scanner::scanNumber(qsizetype &pos)
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

inline Scanner::Step Scanner::scanLiteral(qsizetype &pos, const char *lit, qsizetype len)
{
    if (pos + len > m_n && !m_final)
        return Step::NeedMore;
    if (pos + len > m_n || std::memcmp(m_p + pos, lit, size_t(len)) != 0)
        return fail(QStringLiteral("invalid literal at byte %1").arg(pos));
    pos += len;
    return Step::Ok;
}

} // namespace slp::jsonscan
