// SPDX-License-Identifier: GPL-3.0-or-later
// The JSON body scan's walk over the structure, one step (a token and what it implies) at a
// time, each undone to its checkpoint when it needs bytes that have not arrived yet.
#include "bodyscanner.h"

#include "jsonscanner_p.h"

#include <algorithm>
#include <cstring>

namespace slp {

namespace jsonscan {

using namespace jsontext;

void Scanner::advance(QByteArrayView bytes, bool final)
{
    m_p = bytes.data();
    m_n = bytes.size();
    m_final = final;
    if (m_state == State::Done || m_state == State::Failed || (!final && m_n < m_retryAt))
        return;
    if (!m_started) {
        const Step s = start();
        if (s == Step::Fail)
            m_state = State::Failed;
        if (s != Step::Ok)
            return;
        m_started = true;
    }
    ++m_walks;
    walk();
}

// The checks before the walk, which need the body's first bytes or all of it.
Scanner::Step Scanner::start()
{
    if (m_n == 0)
        return endOfBytes(QStringLiteral("empty body"));
    if (m_n < 3 && !m_final)
        return Step::NeedMore;
    if (m_n >= 3 && std::memcmp(m_p, "\xEF\xBB\xBF", 3) == 0)
        return fail(QStringLiteral("UTF-8 byte order mark at byte 0 (not allowed in JSON)"));
    skipWs(m_pos);
    if (m_pos >= m_n)
        return endOfBytes(QStringLiteral("body is only whitespace"));
    return Step::Ok;
}

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

void Scanner::restore()
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

Scanner::Step Scanner::value()
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

Scanner::Step Scanner::openContainer(char c, KeyKind key)
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

Scanner::Step Scanner::scalar(char c, KeyKind key)
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

void Scanner::record(KeyKind key, ValueKind kind, qsizetype begin, qsizetype end, bool escapes)
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

Scanner::Step Scanner::key()
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

Scanner::Step Scanner::after()
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

BodyScan Scanner::verdict() const
{
    BodyScan scan;
    if (m_state != State::Done) { // failed (or, before finish(), not known yet)
        scan.error = m_error;
        return scan;
    }
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

} // namespace jsonscan

JsonBodyScanner::JsonBodyScanner(int maxDepth)
    : m_scanner(std::make_unique<jsonscan::Scanner>(maxDepth))
{}

JsonBodyScanner::~JsonBodyScanner() = default;
JsonBodyScanner::JsonBodyScanner(JsonBodyScanner &&) noexcept = default;
JsonBodyScanner &JsonBodyScanner::operator=(JsonBodyScanner &&) noexcept = default;

void JsonBodyScanner::feed(QByteArrayView soFar)
{
    m_scanner->advance(soFar, false);
}

BodyScan JsonBodyScanner::finish(QByteArrayView body)
{
    m_scanner->advance(body, true);
    return m_scanner->verdict();
}

qsizetype JsonBodyScanner::progress() const
{
    return m_scanner->progress();
}

int JsonBodyScanner::walks() const
{
    return m_scanner->walks();
}

BodyScan scanBody(const QByteArray &body, int maxDepth)
{
    jsonscan::Scanner scanner(maxDepth);
    scanner.advance(body, true);
    return scanner.verdict();
}

} // namespace slp
