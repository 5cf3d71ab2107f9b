// SPDX-License-Identifier: GPL-3.0-or-later
#include "bodyscanner.h"

#include "jsontext.h"

#include <QList>
#include <QVarLengthArray>

#include <algorithm>

#include <cstring>

namespace slp {

namespace {

using namespace jsontext;

// What a top-level value was, as far as the keys the scan records care.
enum class ValueKind
{
    Compound, // an object or an array
    String,
    True,
    False,
    Null,
    Number
};

// The top-level facts gathered on the way. "Last one wins" for repeated stream/logprobs keys,
// as in the Python servers behind us, while a repeated "model" is an error of its own.
struct TopLevelFacts
{
    bool isObject = false;
    qsizetype objectOpen = -1;
    int modelCount = 0;
    bool modelIsString = false;
    qsizetype modelBegin = -1, modelEnd = -1;
    bool modelEscapes = false;
    BodyScan::Stream stream = BodyScan::Stream::Absent;
    qsizetype streamBegin = -1, streamEnd = -1; // last top-level scalar "stream" value
    bool logprobsWanted[4] = {false, false, false, false};
};

class Scanner
{
public:
    Scanner(const QByteArray &body, int maxDepth)
        : m_p(body.constData()), m_n(body.size()), m_maxDepth(maxDepth)
    {}

    BodyScan run();

private:
    // Where the walk is: a value is next, a key (inside an object), or what follows a value.
    enum class State
    {
        Value,
        Key,
        After
    };
    // The walk over the whole text, one token at a time: false after setting m_error.
    bool walk();
    bool value();
    bool openContainer(char c, KeyKind key);
    bool scalar(char c, KeyKind key);
    bool key();
    // What follows a value; sets `done` at the end of the top-level value.
    bool after(bool &done);
    // Notes the value [begin, end) of a top-level `key` (Other: nothing to note).
    void record(KeyKind key, ValueKind kind, qsizetype begin, qsizetype end, bool escapes = false);
    BodyScan verdict() const;

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
    qsizetype m_pos = 0;
    State m_state = State::Value;
    // One byte per open container: '{' or '['. Depth 1 is the top-level object.
    QVarLengthArray<char, 64> m_stack;
    KeyKind m_pendingKey = KeyKind::Other; // key whose value comes next (depth 1 only)
    TopLevelFacts m_top;
};

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
    if (m_n == 0)
        notJson.error = QStringLiteral("empty body");
    else if (m_n >= 3 && std::memcmp(m_p, "\xEF\xBB\xBF", 3) == 0)
        notJson.error = QStringLiteral("UTF-8 byte order mark at byte 0 (not allowed in JSON)");
    else if (skipWs(m_pos); m_pos >= m_n)
        notJson.error = QStringLiteral("body is only whitespace");
    else if (!walk())
        notJson.error = m_error;
    else
        return verdict();
    return notJson;
}

bool Scanner::walk()
{
    for (bool done = false; !done;) {
        bool ok = false;
        switch (m_state) {
        case State::Value:
            ok = value();
            break;
        case State::Key:
            ok = key();
            break;
        case State::After:
            ok = after(done);
            break;
        }
        if (!ok)
            return false;
    }
    return true;
}

bool Scanner::value()
{
    if (m_pos >= m_n)
        return unexpected(m_pos);
    // Only values of top-level keys are recorded; nested ones are just validated.
    const bool top = m_stack.size() == 1 && m_stack.back() == '{';
    const KeyKind key = top ? m_pendingKey : KeyKind::Other;
    const char c = m_p[m_pos];
    if (c == '{' || c == '[')
        return openContainer(c, key);
    if (!scalar(c, key))
        return false;
    m_state = State::After;
    return true;
}

bool Scanner::openContainer(char c, KeyKind key)
{
    if (m_stack.isEmpty() && c == '{') {
        m_top.isObject = true;
        m_top.objectOpen = m_pos;
    }
    if (m_stack.size() >= m_maxDepth)
        return fail(QStringLiteral("nesting deeper than %1 at byte %2").arg(m_maxDepth).arg(m_pos));
    m_stack.append(c);
    record(key, ValueKind::Compound, -1, -1); // compound: never spliced
    ++m_pos;
    skipWs(m_pos);
    if (m_pos < m_n && m_p[m_pos] == (c == '{' ? '}' : ']')) {
        m_stack.removeLast();
        ++m_pos;
        m_state = State::After;
    } else {
        m_state = c == '{' ? State::Key : State::Value;
    }
    return true;
}

bool Scanner::scalar(char c, KeyKind key)
{
    const qsizetype begin = m_pos;
    if (c == '"') {
        bool escapes = false;
        if (!scanString(m_pos, escapes))
            return false;
        record(key, ValueKind::String, begin, m_pos, escapes);
        return true;
    }
    if (c == 't' || c == 'f' || c == 'n') {
        const ValueKind kind = c == 't'   ? ValueKind::True
                               : c == 'f' ? ValueKind::False
                                          : ValueKind::Null;
        const bool isFalse = kind == ValueKind::False;
        if (!scanLiteral(m_pos, c == 't' ? "true" : isFalse ? "false" : "null", isFalse ? 5 : 4))
            return false;
        record(key, kind, begin, m_pos);
        return true;
    }
    if (c == '.')
        return fail(QStringLiteral("invalid number at byte %1").arg(m_pos));
    if (c != '-' && !isDigit(c))
        return unexpected(m_pos);
    if (!scanNumber(m_pos))
        return false;
    record(key, ValueKind::Number, begin, m_pos);
    return true;
}

void Scanner::record(KeyKind key, ValueKind kind, qsizetype begin, qsizetype end, bool escapes)
{
    switch (key) {
    case KeyKind::Other:
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

bool Scanner::key()
{
    if (m_pos >= m_n || m_p[m_pos] != '"')
        return unexpected(m_pos);
    bool escapes = false;
    const qsizetype begin = m_pos;
    if (!scanString(m_pos, escapes))
        return false;
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
    return true;
}

bool Scanner::after(bool &done)
{
    skipWs(m_pos);
    if (m_stack.isEmpty()) {
        if (m_pos < m_n)
            return fail(QStringLiteral("trailing data at byte %1").arg(m_pos));
        done = true;
        return true;
    }
    if (m_pos >= m_n)
        return unexpected(m_pos);
    const char open = m_stack.back();
    const char c = m_p[m_pos];
    if (c == ',') {
        ++m_pos;
        skipWs(m_pos);
        m_state = open == '{' ? State::Key : State::Value;
        return true;
    }
    if (c == (open == '{' ? '}' : ']')) {
        m_stack.removeLast();
        ++m_pos;
        return true;
    }
    return unexpected(m_pos);
}

BodyScan Scanner::verdict() const
{
    BodyScan scan;
    if (!m_top.isObject) {
        scan.verdict = BodyScan::Verdict::NotObject;
        return scan;
    }
    scan.stream = m_top.stream;
    scan.streamBegin = m_top.streamBegin;
    scan.streamEnd = m_top.streamEnd;
    scan.objectOpen = m_top.objectOpen;
    const bool *wanted = m_top.logprobsWanted;
    scan.wantsLogprobs = std::any_of(wanted, wanted + 4, [](bool w) { return w; });
    if (m_top.modelCount > 1) {
        scan.verdict = BodyScan::Verdict::ModelDuplicate;
    } else if (m_top.modelCount == 0) {
        scan.verdict = BodyScan::Verdict::ModelMissing;
    } else if (!m_top.modelIsString) {
        scan.verdict = BodyScan::Verdict::ModelNotString;
    } else {
        scan.verdict = BodyScan::Verdict::Ok;
        scan.valueBegin = m_top.modelBegin;
        scan.valueEnd = m_top.modelEnd;
        scan.model = decodeString(m_p + m_top.modelBegin + 1, m_top.modelEnd - m_top.modelBegin - 2,
                                  m_top.modelEscapes);
    }
    return scan;
}

} // namespace

BodyScan scanBody(const QByteArray &body, int maxDepth)
{
    return Scanner(body, maxDepth).run();
}

} // namespace slp
