// SPDX-License-Identifier: GPL-3.0-or-later
#include "multipartscanner.h"

#include "bodyedits.h"
#include "httpfield.h"
#include "jsontext.h"
#include "wire/http1.h"
#include "wire/mediatype.h"

#include <cstring>
#include <string.h> // memmem (glibc): a linear two-way search

namespace slp {

namespace {

bool repeatsParameter(const HeaderParameters &d)
{
    for (const auto &[param, value] : d.parameters)
        if (d.count(param) > 1)
            return true;
    return false;
}

// RFC 2046 bchars: DIGIT / ALPHA / "'()+_,-./:=?" and space (not last).
bool isBoundaryChar(char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c != '\0' && std::strchr("'()+_,-./:=? ", c) != nullptr;
}

} // namespace

MultipartBodyScanner::MultipartBodyScanner(QByteArrayView boundary)
    : m_boundary(boundary.toByteArray()), m_delimiter(QByteArrayLiteral("\r\n--") + m_boundary)
{}

void MultipartBodyScanner::feed(QByteArrayView soFar)
{
    advance(soFar, false);
}

MultipartScan MultipartBodyScanner::finish(QByteArrayView body)
{
    advance(body, true);
    return m_scan;
}

qsizetype MultipartBodyScanner::progress() const
{
    return std::max(m_pos, m_searchFrom);
}

void MultipartBodyScanner::advance(QByteArrayView bytes, bool final)
{
    m_p = bytes.data();
    m_n = bytes.size();
    m_final = final;
    if (m_ended || (!final && m_n < m_retryAt))
        return;
    switch (walk()) {
    case Step::Ok:
        m_ended = true;
        verdict();
        break;
    case Step::Fail:
        m_ended = true;
        m_scan.verdict =
            m_ambiguous ? MultipartScan::Verdict::Ambiguous : MultipartScan::Verdict::Malformed;
        break;
    case Step::NeedMore:
        // A search keeps its place: any new byte may end it. Any other wait is retried once
        // the bytes behind it have doubled.
        m_retryAt = m_n + std::max<qsizetype>(1, m_n - progress());
        break;
    }
}

bool MultipartBodyScanner::at(qsizetype pos, QByteArrayView text) const
{
    return pos >= 0 && m_n - pos >= text.size() &&
           std::memcmp(m_p + pos, text.data(), size_t(text.size())) == 0;
}

qsizetype MultipartBodyScanner::find(qsizetype from, QByteArrayView needle, qsizetype limit) const
{
    if (from < 0 || limit - from < needle.size())
        return -1;
    const void *hit = memmem(m_p + from, size_t(limit - from), needle.data(), needle.size());
    return hit ? static_cast<const char *>(hit) - m_p : -1;
}

MultipartBodyScanner::Step MultipartBodyScanner::fail(const QString &why)
{
    m_scan.error = why;
    return Step::Fail;
}

QString MultipartBodyScanner::quotedBoundary(const char *suffix) const
{
    return QStringLiteral("\"--%1%2\"")
        .arg(QString::fromLatin1(m_boundary), QString::fromLatin1(suffix));
}

qsizetype MultipartBodyScanner::search(qsizetype from)
{
    const qsizetype start = std::max(from, m_searchFrom);
    const qsizetype hit = find(start, m_delimiter, m_n);
    if (hit >= 0 || m_final) {
        m_searchFrom = -1;
        return hit;
    }
    // A delimiter may straddle the end: its first bytes are searched again next time.
    m_searchFrom = std::max(start, m_n - m_delimiter.size() + 1);
    return -2;
}

MultipartBodyScanner::Step MultipartBodyScanner::opening()
{
    const QByteArrayView dashBoundary = QByteArrayView(m_delimiter).sliced(2);
    if (m_n < dashBoundary.size() && !m_final)
        return Step::NeedMore;
    if (at(0, dashBoundary)) {
        m_pos = dashBoundary.size(); // no preamble: the body opens with the boundary
        return Step::Ok;
    }
    const qsizetype first = search(0);
    if (first == -2)
        return Step::NeedMore;
    if (first < 0)
        return fail(
            QStringLiteral("multipart body has no opening delimiter %1").arg(quotedBoundary("")));
    // Go's reader takes a preamble line that opens with the boundary, after a bare LF too,
    // for the first delimiter: it would read other parts than SLP.
    const QByteArray bareLf = "\n" + dashBoundary.toByteArray();
    if (find(0, bareLf, first + bareLf.size()) >= 0) {
        m_ambiguous = true;
        return fail(QStringLiteral("multipart preamble has a line that opens with %1 after a bare "
                                   "LF, which some parsers take for the first delimiter")
                        .arg(quotedBoundary("")));
    }
    m_pos = first + m_delimiter.size();
    return Step::Ok;
}

// Delimiter to delimiter: each search starts where the last delimiter ended. A part is read
// only once the delimiter after it is there, so all of it is.
MultipartBodyScanner::Step MultipartBodyScanner::walk()
{
    if (!m_opened) {
        if (const Step s = opening(); s != Step::Ok)
            return s;
        m_opened = true;
    }
    for (;;) {
        const qsizetype delimiterEnd = m_pos;
        if (m_n - m_pos < 2 && !m_final)
            return Step::NeedMore;
        if (at(m_pos, "--")) {
            m_scan.closeEnd = m_pos + 2; // the epilogue after it is anything
            return Step::Ok;
        }
        if (m_p[m_pos] == ' ' || m_p[m_pos] == '\t') {
            // RFC 2046 allows transport padding here; python-multipart reads it as content.
            m_ambiguous = true;
            return fail(QStringLiteral("multipart delimiter ending at byte %1 is followed by "
                                       "transport padding, which some parsers read as content")
                            .arg(delimiterEnd));
        }
        if (!at(m_pos, "\r\n"))
            return fail(QStringLiteral("multipart delimiter ending at byte %1 is followed by "
                                       "neither CRLF nor \"--\"")
                            .arg(delimiterEnd));
        const qsizetype partBegin = m_pos + 2;
        const qsizetype next = search(partBegin);
        if (next == -2)
            return Step::NeedMore;
        if (next < 0)
            return fail(QStringLiteral("multipart body has no closing delimiter %1")
                            .arg(quotedBoundary("--")));
        if (!part(partBegin, next))
            return Step::Fail;
        m_pos = next + m_delimiter.size();
    }
}

// One part: header lines, a blank line, then its content up to `end`, where the next
// delimiter's CRLF starts.
bool MultipartBodyScanner::part(qsizetype begin, qsizetype end)
{
    qsizetype contentBegin = begin + 2; // a part with no header lines opens with its blank line
    if (!(at(begin, "\r\n") && contentBegin <= end)) {
        const qsizetype blank = find(begin, "\r\n\r\n", end);
        if (blank < 0) {
            fail(QStringLiteral("multipart part at byte %1 has a truncated header: no blank "
                                "line before the next delimiter")
                     .arg(begin));
            return false;
        }
        contentBegin = blank + 4;
    }
    PartHeaders h;
    for (qsizetype line = begin; line < contentBegin - 2;) {
        const qsizetype eol = find(line, "\r\n", contentBegin);
        if (!headerLine(line, eol, h))
            return false;
        line = eol + 2;
    }
    if (!checkPart(begin, h))
        return false;
    if (h.isModel && ++m_modelParts == 1) {
        m_scan.valueBegin = contentBegin;
        m_scan.valueEnd = end;
        m_modelIsFile = h.isFile;
    }
    return true;
}

bool MultipartBodyScanner::checkPart(qsizetype begin, const PartHeaders &h)
{
    // python-multipart keeps a part's last Content-Disposition, Go's textproto its first.
    const char *why =
        h.dispositions > 1 ? "has more than one Content-Disposition header" : h.ambiguity;
    if (!why && h.isModel && h.transferEncoded)
        why = "is the model part with a Content-Transfer-Encoding, which Go's parser decodes";
    if (!why && h.isModel && h.otherCharset)
        why = "is the model part in a charset other than UTF-8, which some parsers apply";
    if (!why)
        return true;
    m_ambiguous = true;
    fail(QStringLiteral("multipart part at byte %1 %2: parsers would read another model than "
                        "SLP")
             .arg(begin)
             .arg(QLatin1String(why)));
    return false;
}

// "Name: value"; Content-Disposition names the part (RFC 7578 4.2: form-data; name="..."),
// and two more decide how some parsers read its content.
bool MultipartBodyScanner::headerLine(qsizetype begin, qsizetype end, PartHeaders &h)
{
    const QByteArrayView line(m_p + begin, end - begin);
    const qsizetype colon = line.indexOf(':');
    bool nameOk = colon > 0;
    for (qsizetype i = 0; nameOk && i < colon; ++i)
        nameOk = isTokenChar(line[i]);
    if (!nameOk) {
        fail(QStringLiteral("multipart part header at byte %1 is not \"Name: value\"").arg(begin));
        return false;
    }
    if (line.contains('\r') || line.contains('\n')) {
        h.ambiguity = "has a bare CR or LF in a header line, which Go's parser ends the line at";
        return true;
    }
    const QByteArrayView name = line.first(colon);
    const HeaderParameters params = parseHeaderParameters(line.sliced(colon + 1));
    if (equalsNoCase(name, "content-transfer-encoding")) {
        h.transferEncoded = true;
    } else if (equalsNoCase(name, "content-type")) {
        const QByteArray charset = params.value("charset");
        h.otherCharset = !charset.isEmpty() && !equalsNoCase(charset, "utf-8") &&
                         !equalsNoCase(charset, "us-ascii");
    } else if (equalsNoCase(name, "content-disposition")) {
        ++h.dispositions;
        readDisposition(params, h);
    }
    return true;
}

void MultipartBodyScanner::readDisposition(const HeaderParameters &d, PartHeaders &h)
{
    // Its name says "model". A repeated name is refused below before `named` is read.
    const bool named = d.value("name") == "model";
    if (!d.valid)
        h.ambiguity = "has a Content-Disposition SLP cannot parse, which some parsers still read";
    else if (d.has("name*"))
        h.ambiguity = "names itself with name*=, which RFC 7578 forbids and some parsers decode";
    else if (repeatsParameter(d))
        h.ambiguity = "gives a Content-Disposition parameter twice (a parser keeps the first, "
                      "another the last, Go's drops them all)";
    else if (named && d.escaped.contains("name"))
        h.ambiguity = "has a backslash escape in its name, which parsers undo differently";
    else if (named && d.token != "form-data")
        h.ambiguity = "is named \"model\" but is not form-data, which some parsers still read";
    if (d.token == "form-data" && named) {
        h.isModel = true;
        h.isFile = d.has("filename") || d.has("filename*");
    }
}

void MultipartBodyScanner::verdict()
{
    using V = MultipartScan::Verdict;
    MultipartScan &s = m_scan;
    const qsizetype size = s.valueEnd - s.valueBegin;
    if (m_modelParts > 1) {
        s.verdict = V::ModelDuplicate;
        s.error = QStringLiteral("multipart body has more than one \"model\" part");
    } else if (m_modelParts == 0) {
        s.verdict = V::ModelMissing;
        s.error =
            QStringLiteral("multipart body has no \"model\" part: SLP routes each request by its "
                           "model; add a form field named model (docs/HTTP.md)");
    } else if (m_modelIsFile) {
        s.verdict = V::ModelFile;
        s.error = QStringLiteral("the multipart \"model\" part is a file (it has a filename): "
                                 "send the model id as a plain form field");
    } else {
        const QByteArrayView value(m_p + s.valueBegin, size);
        ModelIdFault fault = ModelIdFault::None;
        s.error = modelIdError(value, QStringLiteral("the multipart \"model\" part"), &fault);
        switch (fault) {
        case ModelIdFault::None:
            s.verdict = V::Ok;
            s.model = QString::fromUtf8(value);
            return;
        case ModelIdFault::Empty:
            s.verdict = V::ModelEmpty;
            break;
        case ModelIdFault::TooLong:
            s.verdict = V::ModelTooLong;
            break;
        case ModelIdFault::NotUtf8:
            s.verdict = V::ModelNotUtf8;
            break;
        }
    }
    s.valueBegin = s.valueEnd = -1;
}

QString boundaryError(QByteArrayView boundary)
{
    if (boundary.isEmpty())
        return QStringLiteral("multipart/form-data needs a boundary parameter in Content-Type");
    if (boundary.size() > maxBoundaryBytes)
        return QStringLiteral("multipart boundary is %1 characters: at most %2 allowed (RFC 2046)")
            .arg(boundary.size())
            .arg(maxBoundaryBytes);
    for (const char c : boundary) {
        if (!isBoundaryChar(c))
            return QStringLiteral("multipart boundary has a character RFC 2046 does not allow "
                                  "(byte 0x%1)")
                .arg(uchar(c), 2, 16, QLatin1Char('0'));
    }
    if (boundary.back() == ' ')
        return QStringLiteral("multipart boundary ends in a space (RFC 2046 does not allow it)");
    return {};
}

MultipartScan scanMultipart(const QByteArray &body, QByteArrayView boundary)
{
    return MultipartBodyScanner(boundary).finish(body);
}

bool multipartValueError(const QString &value, QByteArrayView boundary)
{
    // The value follows a CRLF (the header block's blank line): a value that begins with
    // "--boundary" would be a delimiter as much as one that holds "\r\n--boundary". None can
    // straddle the value's end: the delimiter's only CR is its first byte.
    const QByteArray delimiter = "\r\n--" + boundary.toByteArray();
    return QByteArray(QByteArrayLiteral("\r\n") + value.toUtf8()).contains(delimiter);
}

} // namespace slp
