// SPDX-License-Identifier: GPL-3.0-or-later
#include "bodyscanner.h"

#include "jsontext.h"

#include <QList>
#include <QVarLengthArray>

#include <algorithm>

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace slp {

namespace {

using namespace jsontext;

class Scanner
{
public:
    Scanner(const QByteArray &body, int maxDepth)
        : m_p(body.constData()), m_n(body.size()), m_maxDepth(maxDepth)
    {}

    BodyScan run();

private:
    // Each returns false after setting m_error.
    bool scanString(qsizetype &pos, bool &hasEscapes);
    bool scanNumber(qsizetype &pos);
    bool scanLiteral(qsizetype &pos, const char *lit, qsizetype len);
    bool validateUtf8(qsizetype &pos);

    void skipWs(qsizetype &pos) const
    {
        while (pos < m_n) {
            const char c = m_p[pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                break;
            ++pos;
        }
    }

    bool fail(const QString &why)
    {
        m_error = why;
        return false;
    }
    bool unexpected(qsizetype pos)
    {
        if (pos >= m_n)
            return fail(QStringLiteral("unexpected end of input at byte %1").arg(pos));
        const uchar c = uchar(m_p[pos]);
        if (c >= 0x21 && c < 0x7f)
            return fail(QStringLiteral("unexpected '%1' at byte %2").arg(QChar(c)).arg(pos));
        return fail(QStringLiteral("unexpected byte 0x%1 at byte %2")
                        .arg(c, 2, 16, QLatin1Char('0'))
                        .arg(pos));
    }

    const char *m_p;
    qsizetype m_n;
    int m_maxDepth;
    QString m_error;
};

// The hot loop: base64 images make string bodies nearly all of a large request. Plain bytes
// (0x20..0x7f except '"' and '\\') are skipped 16 at a time; a signed compare against 0x20
// catches control characters and every byte >= 0x80 in one instruction.
inline qsizetype skipPlain(const char *p, qsizetype pos, qsizetype n)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (pos + 16 <= n) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + pos));
        const __m128i special =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmplt_epi8(v, space));
        const int mask = _mm_movemask_epi8(special);
        if (mask != 0)
            return pos + __builtin_ctz(unsigned(mask));
        pos += 16;
    }
#else
    // SWAR: 8 bytes at a time; any flagged block falls to the byte loop below.
    constexpr quint64 ones = 0x0101010101010101ULL;
    constexpr quint64 highs = 0x8080808080808080ULL;
    auto hasZero = [](quint64 x) { return (x - ones) & ~x & highs; };
    while (pos + 8 <= n) {
        quint64 w;
        std::memcpy(&w, p + pos, 8);
        const quint64 special = (w & highs) | ((w - ones * 0x20) & ~w & highs) |
                                hasZero(w ^ (ones * '"')) | hasZero(w ^ (ones * '\\'));
        if (special != 0)
            break;
        pos += 8;
    }
#endif
    while (pos < n) {
        const uchar c = uchar(p[pos]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
            return pos;
        ++pos;
    }
    return pos;
}

// Validates one UTF-8 sequence at pos (lead byte >= 0x80) per Unicode table 3-7: no overlong
// forms, no encoded surrogates, nothing above U+10FFFF.
bool Scanner::validateUtf8(qsizetype &pos)
{
    const qsizetype len = utf8SequenceLength(reinterpret_cast<const uchar *>(m_p), pos, m_n);
    if (len == 0)
        return fail(QStringLiteral("invalid UTF-8 in string at byte %1").arg(pos));
    pos += len;
    return true;
}

// pos is at the opening quote; on success it is one past the closing quote.
bool Scanner::scanString(qsizetype &pos, bool &hasEscapes)
{
    const qsizetype start = pos;
    ++pos;
    for (;;) {
        pos = skipPlain(m_p, pos, m_n);
        if (pos >= m_n)
            return fail(QStringLiteral("unterminated string starting at byte %1").arg(start));
        const uchar c = uchar(m_p[pos]);
        if (c == '"') {
            ++pos;
            return true;
        }
        if (c == '\\') {
            hasEscapes = true;
            if (pos + 1 >= m_n)
                return fail(QStringLiteral("unterminated string starting at byte %1").arg(start));
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
                break;
            case 'u':
                if (pos + 6 > m_n || hexValue(m_p[pos + 2]) < 0 || hexValue(m_p[pos + 3]) < 0 ||
                    hexValue(m_p[pos + 4]) < 0 || hexValue(m_p[pos + 5]) < 0)
                    return fail(QStringLiteral("invalid \\u escape at byte %1").arg(pos));
                pos += 6;
                break;
            default:
                return fail(QStringLiteral("invalid escape at byte %1").arg(pos));
            }
            continue;
        }
        if (c < 0x20)
            return fail(QStringLiteral("control character 0x%1 in string at byte %2")
                            .arg(c, 2, 16, QLatin1Char('0'))
                            .arg(pos));
        // Inline the common well-formed cases (accented Latin, CJK); the rest is checked in full.
        const auto *u = reinterpret_cast<const uchar *>(m_p);
        if (c >= 0xE1 && c <= 0xEC && pos + 2 < m_n && (u[pos + 1] & 0xC0) == 0x80 &&
            (u[pos + 2] & 0xC0) == 0x80) {
            pos += 3;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF && pos + 1 < m_n && (u[pos + 1] & 0xC0) == 0x80) {
            pos += 2;
            continue;
        }
        if (!validateUtf8(pos))
            return false;
    }
}

// RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
bool Scanner::scanNumber(qsizetype &pos)
{
    const qsizetype start = pos;
    if (m_p[pos] == '-')
        ++pos;
    if (pos >= m_n || !isDigit(m_p[pos]))
        return fail(QStringLiteral("invalid number at byte %1").arg(start));
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
        if (pos >= m_n || !isDigit(m_p[pos]))
            return fail(QStringLiteral("invalid number at byte %1").arg(start));
        while (pos < m_n && isDigit(m_p[pos]))
            ++pos;
    }
    if (pos < m_n && (m_p[pos] == 'e' || m_p[pos] == 'E')) {
        ++pos;
        if (pos < m_n && (m_p[pos] == '+' || m_p[pos] == '-'))
            ++pos;
        if (pos >= m_n || !isDigit(m_p[pos]))
            return fail(QStringLiteral("invalid number at byte %1").arg(start));
        while (pos < m_n && isDigit(m_p[pos]))
            ++pos;
    }
    return true;
}

bool Scanner::scanLiteral(qsizetype &pos, const char *lit, qsizetype len)
{
    if (pos + len > m_n || std::memcmp(m_p + pos, lit, size_t(len)) != 0)
        return fail(QStringLiteral("invalid literal at byte %1").arg(pos));
    pos += len;
    return true;
}

BodyScan Scanner::run()
{
    BodyScan notJson; // verdict NotJson by default
    auto bad = [&]() {
        notJson.error = m_error;
        return notJson;
    };

    if (m_n == 0) {
        notJson.error = QStringLiteral("empty body");
        return notJson;
    }
    if (m_n >= 3 && std::memcmp(m_p, "\xEF\xBB\xBF", 3) == 0) {
        notJson.error = QStringLiteral("UTF-8 byte order mark at byte 0 (not allowed in JSON)");
        return notJson;
    }

    // One byte per open container: '{' or '['. Depth 1 is the top-level object.
    QVarLengthArray<char, 64> stack;

    // Top-level facts; "last one wins" for repeated stream/logprobs keys, as in the Python
    // servers behind us, while a repeated "model" is an error of its own.
    int modelCount = 0;
    bool modelIsString = false;
    qsizetype modelBegin = -1, modelEnd = -1;
    bool modelEscapes = false;
    BodyScan::Stream stream = BodyScan::Stream::Absent;
    qsizetype streamBegin = -1, streamEnd = -1; // last top-level scalar "stream" value
    qsizetype objectOpen = -1;
    bool logprobsWanted[4] = {false, false, false, false};

    KeyKind pendingKey = KeyKind::Other; // key whose value comes next (depth 1 only)
    bool topLevelObject = false;

    qsizetype pos = 0;
    skipWs(pos);
    if (pos >= m_n) {
        notJson.error = QStringLiteral("body is only whitespace");
        return notJson;
    }

    enum class State
    {
        Value,
        Key,
        After
    };
    State state = State::Value;
    for (;;) {
        switch (state) {
        case State::Value: {
            if (pos >= m_n) {
                unexpected(pos);
                return bad();
            }
            // Only values of top-level keys are recorded; nested ones are just validated.
            const bool top = stack.size() == 1 && stack.back() == '{';
            const KeyKind key = top ? pendingKey : KeyKind::Other;
            const char c = m_p[pos];
            if (key == KeyKind::Model)
                ++modelCount;
            switch (c) {
            case '{':
            case '[':
                if (stack.isEmpty() && c == '{') {
                    topLevelObject = true;
                    objectOpen = pos;
                }
                if (stack.size() >= m_maxDepth) {
                    fail(QStringLiteral("nesting deeper than %1 at byte %2")
                             .arg(m_maxDepth)
                             .arg(pos));
                    return bad();
                }
                stack.append(c);
                if (key == KeyKind::Model)
                    modelIsString = false;
                else if (key == KeyKind::Stream) {
                    stream = BodyScan::Stream::Other;
                    streamBegin = streamEnd = -1; // compound: never spliced
                } else if (key >= KeyKind::Logprobs)
                    logprobsWanted[int(key) - int(KeyKind::Logprobs)] = true;
                ++pos;
                skipWs(pos);
                if (pos < m_n && m_p[pos] == (c == '{' ? '}' : ']')) {
                    stack.removeLast();
                    ++pos;
                    state = State::After;
                } else {
                    state = c == '{' ? State::Key : State::Value;
                }
                continue;
            case '"': {
                bool esc = false;
                const qsizetype begin = pos;
                if (!scanString(pos, esc))
                    return bad();
                if (key == KeyKind::Model) {
                    modelIsString = true;
                    modelBegin = begin;
                    modelEnd = pos;
                    modelEscapes = esc;
                } else if (key == KeyKind::Stream) {
                    stream = BodyScan::Stream::Other;
                    streamBegin = begin;
                    streamEnd = pos;
                } else if (key >= KeyKind::Logprobs) {
                    logprobsWanted[int(key) - int(KeyKind::Logprobs)] = true;
                }
                break;
            }
            case 't':
            case 'f':
            case 'n': {
                const bool isTrue = c == 't', isFalse = c == 'f';
                const qsizetype literalBegin = pos;
                if (!scanLiteral(pos,
                                 isTrue    ? "true"
                                 : isFalse ? "false"
                                           : "null",
                                 isFalse ? 5 : 4))
                    return bad();
                if (key == KeyKind::Model)
                    modelIsString = false;
                else if (key == KeyKind::Stream) {
                    stream = isTrue    ? BodyScan::Stream::True
                             : isFalse ? BodyScan::Stream::False
                                       : BodyScan::Stream::Other;
                    streamBegin = literalBegin;
                    streamEnd = pos;
                } else if (key >= KeyKind::Logprobs)
                    logprobsWanted[int(key) - int(KeyKind::Logprobs)] = isTrue;
                break;
            }
            default:
                if (c == '.') {
                    fail(QStringLiteral("invalid number at byte %1").arg(pos));
                    return bad();
                }
                if (c != '-' && !isDigit(c)) {
                    unexpected(pos);
                    return bad();
                }
                const qsizetype numberBegin = pos;
                if (!scanNumber(pos))
                    return bad();
                if (key == KeyKind::Model)
                    modelIsString = false;
                else if (key == KeyKind::Stream) {
                    stream = BodyScan::Stream::Other;
                    streamBegin = numberBegin;
                    streamEnd = pos;
                } else if (key >= KeyKind::Logprobs)
                    logprobsWanted[int(key) - int(KeyKind::Logprobs)] = true;
                break;
            }
            state = State::After;
            continue;
        }
        case State::Key: {
            if (pos >= m_n || m_p[pos] != '"') {
                unexpected(pos);
                return bad();
            }
            bool esc = false;
            const qsizetype begin = pos;
            if (!scanString(pos, esc))
                return bad();
            if (stack.size() == 1) {
                const char *s = m_p + begin + 1;
                const qsizetype n = pos - begin - 2;
                pendingKey = esc ? classifyEscapedKey(s, n) : classifyKey(s, n);
            }
            skipWs(pos);
            if (pos >= m_n || m_p[pos] != ':') {
                unexpected(pos);
                return bad();
            }
            ++pos;
            skipWs(pos);
            state = State::Value;
            continue;
        }
        case State::After: {
            skipWs(pos);
            if (stack.isEmpty()) {
                if (pos < m_n) {
                    fail(QStringLiteral("trailing data at byte %1").arg(pos));
                    return bad();
                }
                break;
            }
            if (pos >= m_n) {
                unexpected(pos);
                return bad();
            }
            const char open = stack.back();
            const char c = m_p[pos];
            if (c == ',') {
                ++pos;
                skipWs(pos);
                state = open == '{' ? State::Key : State::Value;
                continue;
            }
            if (c == (open == '{' ? '}' : ']')) {
                stack.removeLast();
                ++pos;
                continue;
            }
            unexpected(pos);
            return bad();
        }
        }
        break; // only State::After at depth 0 with nothing left gets here
    }

    BodyScan scan;
    if (!topLevelObject) {
        scan.verdict = BodyScan::Verdict::NotObject;
        return scan;
    }
    scan.stream = stream;
    scan.streamBegin = streamBegin;
    scan.streamEnd = streamEnd;
    scan.objectOpen = objectOpen;
    scan.wantsLogprobs =
        logprobsWanted[0] || logprobsWanted[1] || logprobsWanted[2] || logprobsWanted[3];
    if (modelCount > 1) {
        scan.verdict = BodyScan::Verdict::ModelDuplicate;
    } else if (modelCount == 0) {
        scan.verdict = BodyScan::Verdict::ModelMissing;
    } else if (!modelIsString) {
        scan.verdict = BodyScan::Verdict::ModelNotString;
    } else {
        scan.verdict = BodyScan::Verdict::Ok;
        scan.valueBegin = modelBegin;
        scan.valueEnd = modelEnd;
        scan.model = decodeString(m_p + modelBegin + 1, modelEnd - modelBegin - 2, modelEscapes);
    }
    return scan;
}

} // namespace

BodyScan scanBody(const QByteArray &body, int maxDepth)
{
    return Scanner(body, maxDepth).run();
}

} // namespace slp
