// SPDX-License-Identifier: GPL-3.0-or-later
// The JSON body scan: where it starts and ends, its verdict, and the resumable scanner's face
// (the walk and the tokens are in jsonscanner.cpp).
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
    if (m_top.modelLookalike) {
        scan.verdict = BodyScan::Verdict::ModelAmbiguous;
        scan.error = QStringLiteral("a top-level key spells \"model\" in another case, which Go's "
                                    "JSON decoding reads as the model");
    } else if (m_top.modelCount > 1) {
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
