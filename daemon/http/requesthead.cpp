// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/requesthead.h"

#include <cctype>
#include <cstring>

namespace slp {

namespace {
// QtHttpServer 6.4's own header limits (QHttpHeaderParser): more fields, or a longer one, and
// it drops the lot. SLP refuses such heads first; the field size counts its CRLF, so SLP is
// never the more lenient of the two.
constexpr int kMaxFields = 100;
constexpr qsizetype kMaxFieldBytes = 100 * 1024;

RequestHead reject(RequestHead head, int status, QByteArray message)
{
    head.state = RequestHead::State::Rejected;
    head.errorStatus = status;
    head.errorMessage = std::move(message);
    return head;
}

bool equalsNoCase(QByteArrayView a, QByteArrayView b)
{
    return a.size() == b.size() && qstrnicmp(a.data(), b.data(), a.size()) == 0;
}

QByteArrayView trimmed(QByteArrayView v)
{
    while (!v.isEmpty() && (v.front() == ' ' || v.front() == '\t')) {
        v = v.sliced(1);
    }
    while (!v.isEmpty() && (v.back() == ' ' || v.back() == '\t')) {
        v.chop(1);
    }
    return v;
}

// RFC 3986 host [ ":" port ]: an IP-literal in brackets, or reg-name / IPv4 characters.
bool isValidHost(QByteArrayView value)
{
    qsizetype i = 0;
    if (value.startsWith('[')) {
        const qsizetype close = value.indexOf(']');
        if (close < 2) {
            return false;
        }
        for (const char c : value.sliced(1, close - 1)) {
            if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
                return false;
            }
        }
        i = close + 1;
    } else {
        while (i < value.size() && value[i] != ':') {
            const char c = value[i];
            if (!std::isalnum(static_cast<unsigned char>(c)) &&
                !std::strchr("-._~%!$&'()*+,;=", c)) {
                return false;
            }
            ++i;
        }
        if (i == 0) {
            return false;
        }
    }
    if (i == value.size()) {
        return true;
    }
    if (value[i] != ':' || value.size() - i - 1 > 5) {
        return false;
    }
    for (const char c : value.sliced(i + 1)) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    return true;
}

// A path segment that is "." or "..", also written with %2e: resolved by some hops and not
// by others, so what is routed would not be what is forwarded.
bool hasDotSegment(QByteArrayView target)
{
    const qsizetype query = target.indexOf('?');
    const QByteArrayView path = query < 0 ? target : target.first(query);
    if (!path.contains('.') && !path.contains('%')) {
        return false; // the common case, without a copy
    }
    for (const QByteArray &segment : path.toByteArray().split('/')) {
        const QByteArray plain = segment.toLower().replace("%2e", ".");
        if (plain == "." || plain == "..") {
            return true;
        }
    }
    return false;
}

bool containsToken(QByteArrayView list, QByteArrayView token)
{
    for (const QByteArray &part : QByteArray(list.data(), list.size()).split(',')) {
        if (equalsNoCase(trimmed(part), token)) {
            return true;
        }
    }
    return false;
}
} // namespace

bool isTokenChar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return true;
    }
    return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

QByteArray RequestHead::header(QByteArrayView name) const
{
    for (const auto &[n, v] : headers) {
        if (equalsNoCase(n, name)) {
            return v;
        }
    }
    return {};
}

RequestHead parseRequestHead(QByteArrayView data, const RequestHeadLimits &limits)
{
    RequestHead head;
    // Tolerate the stray CRLFs some clients send between requests (RFC 9112 2.2); they count
    // toward max_header_bytes like every other byte of the head.
    qsizetype start = 0;
    while (start + 1 < data.size() && data[start] == '\r' && data[start + 1] == '\n') {
        start += 2;
    }
    if (start > limits.maxHeaderBytes) {
        return reject(head, 431, "request header fields too large");
    }

    // Request line. Every line is checked the same way whether it is complete or still
    // arriving, limits first: the verdict must not depend on where a read ended (a request
    // arrives in any number of reads; fuzz_request_split holds this).
    const qsizetype lineEnd = data.indexOf('\n', start);
    const qsizetype seenEnd = lineEnd < 0 ? data.size() : lineEnd; // the line so far, no LF
    const QByteArrayView seen = data.sliced(start, seenEnd - start);
    // Of a NUL and the byte past the limit, the one that came first decides (a read may end
    // between them).
    const qsizetype tooLongAt =
        seenEnd > limits.maxHeaderBytes ? limits.maxHeaderBytes - start : -1;
    if (const qsizetype nul = seen.indexOf('\0'); nul >= 0 && (tooLongAt < 0 || nul < tooLongAt)) {
        return reject(head, 400, "NUL byte in request line");
    }
    if (tooLongAt >= 0) {
        // Still inside the blank lines before a request: they are head bytes too.
        return seen.isEmpty() || seen == "\r" ? reject(head, 431, "request header fields too large")
                                              : reject(head, 414, "request line too long");
    }
    if (lineEnd < 0) {
        return head; // Incomplete
    }
    if (lineEnd == start || data[lineEnd - 1] != '\r') {
        return reject(head, 400, "request line must end with CRLF");
    }
    const QByteArrayView line = data.sliced(start, lineEnd - 1 - start);
    if (line.startsWith("PRI * HTTP/2")) {
        return reject(
            head, 505,
            "HTTP/2 is not served here: speak HTTP/1.1 (put TLS and HTTP/2 in front, e.g. Caddy)");
    }
    const qsizetype sp1 = line.indexOf(' ');
    const qsizetype sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
    if (sp1 <= 0 || sp2 < 0 || line.indexOf(' ', sp2 + 1) >= 0) {
        return reject(head, 400, "malformed request line");
    }
    head.method = line.first(sp1).toByteArray();
    for (const char c : head.method) {
        if (!isTokenChar(c)) {
            return reject(head, 400, "malformed method");
        }
    }
    head.target = line.sliced(sp1 + 1, sp2 - sp1 - 1).toByteArray();
    if (head.target.isEmpty()) {
        return reject(head, 400, "empty request target");
    }
    if (head.target.size() > limits.maxHeaderBytes) {
        return reject(head, 414, "request URL too long");
    }
    if (!head.target.startsWith('/')) {
        return reject(head, 400, "request target must be a path (origin form, starting with /)");
    }
    if (hasDotSegment(head.target)) {
        return reject(head, 400, "request target has a dot segment (. or ..)");
    }
    for (const char c : head.target) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) {
            return reject(head, 400, "control character in request target");
        }
    }
    const QByteArrayView version = line.sliced(sp2 + 1);
    if (version == "HTTP/1.1") {
        head.versionMinor = 1;
    } else if (version == "HTTP/1.0") {
        head.versionMinor = 0;
        head.keepAlive = false;
    } else if (version.startsWith("HTTP/")) {
        return reject(head, 505, "HTTP version not supported: use HTTP/1.1");
    } else {
        return reject(head, 400, "malformed request line");
    }

    // Header fields.
    qsizetype pos = lineEnd + 1;
    bool sawContentLength = false;
    bool sawTransferEncoding = false;
    int hosts = 0;
    bool hostValid = true;
    for (;;) {
        if (pos > limits.maxHeaderBytes) {
            return reject(head, 431, "request header fields too large");
        }
        const qsizetype end = data.indexOf('\n', pos);
        // This line so far, without its LF, checked alike complete or not (see above).
        const QByteArrayView part = data.sliced(pos, (end < 0 ? data.size() : end) - pos);
        // Where in `part` each limit is first passed (-1: not yet). QtHttpServer parses the
        // head again and silently drops every field past its own limits, then frames the body
        // without them (docs/QT64.md, "Qt parses the head a second time").
        const qsizetype headAt =
            pos + part.size() > limits.maxHeaderBytes ? limits.maxHeaderBytes - pos : -1;
        const qsizetype fieldsAt = head.headers.size() < kMaxFields || part.isEmpty() ? -1
                                   : part.front() != '\r'                             ? 0
                                   : part.size() > 1                                  ? 1
                                                     : -1; // "\r": maybe the blank line
        const qsizetype fieldAt = part.size() + 1 > kMaxFieldBytes ? kMaxFieldBytes - 1 : -1;
        qsizetype limitAt = -1;
        for (const qsizetype at : {headAt, fieldsAt, fieldAt}) {
            if (at >= 0 && (limitAt < 0 || at < limitAt)) {
                limitAt = at;
            }
        }
        // Of a NUL and the byte past a limit, the one that came first decides.
        if (const qsizetype nul = part.indexOf('\0'); nul >= 0 && (limitAt < 0 || nul < limitAt)) {
            return reject(head, 400, "NUL byte in header");
        }
        if (limitAt >= 0) {
            return limitAt == headAt     ? reject(head, 431, "request header fields too large")
                   : limitAt == fieldsAt ? reject(head, 431, "more than 100 header fields")
                                         : reject(head, 431, "a header field larger than 100 KiB");
        }
        if (end < 0) {
            return head; // Incomplete
        }
        if (end == pos || data[end - 1] != '\r') {
            return reject(head, 400, "header line must end with CRLF");
        }
        const QByteArrayView field = data.sliced(pos, end - 1 - pos);
        pos = end + 1;
        if (field.isEmpty()) {
            break; // the blank line
        }
        if (field.front() == ' ' || field.front() == '\t') {
            return reject(head, 400, "obsolete line folding in header");
        }
        const qsizetype colon = field.indexOf(':');
        if (colon <= 0) {
            return reject(head, 400, "malformed header line");
        }
        const QByteArrayView name = field.first(colon);
        for (const char c : name) {
            if (!isTokenChar(c)) {
                return reject(head, 400, "invalid character in header name");
            }
        }
        const QByteArrayView value = trimmed(field.sliced(colon + 1));
        for (const char c : value) {
            if (c == '\r' || c == '\n' || c == '\0') {
                return reject(head, 400, "CR, LF or NUL in a header value");
            }
        }
        if (equalsNoCase(name, "content-length")) {
            bool ok = !value.isEmpty();
            for (const char c : value) {
                ok = ok && c >= '0' && c <= '9';
            }
            const qint64 length = ok && value.size() <= 18 ? value.toLongLong(&ok) : -1;
            if (!ok || length < 0) {
                return reject(head, 400, "invalid Content-Length");
            }
            if (sawContentLength && length != head.contentLength) {
                return reject(head, 400, "two different Content-Length headers");
            }
            sawContentLength = true;
            head.contentLength = length;
        } else if (equalsNoCase(name, "transfer-encoding")) {
            if (sawTransferEncoding || !equalsNoCase(value, "chunked")) {
                return reject(head, 501, "unsupported Transfer-Encoding: only chunked is accepted");
            }
            sawTransferEncoding = true;
            head.chunked = true;
        } else if (equalsNoCase(name, "connection")) {
            if (containsToken(value, "close")) {
                head.keepAlive = false;
            } else if (containsToken(value, "keep-alive") && head.versionMinor == 0) {
                head.keepAlive = true;
            }
        } else if (equalsNoCase(name, "host")) {
            ++hosts;
            hostValid = hostValid && isValidHost(value);
        } else if (equalsNoCase(name, "expect")) {
            if (!equalsNoCase(value, "100-continue")) {
                return reject(head, 417, "unsupported Expect");
            }
            head.expectContinue = head.versionMinor == 1;
        }
        head.headers.append({name.toByteArray(), value.toByteArray()});
    }
    if (sawContentLength && sawTransferEncoding) {
        return reject(head, 400, "Content-Length together with Transfer-Encoding");
    }
    if (hosts > 1 || !hostValid || (hosts == 0 && head.versionMinor == 1)) {
        return reject(head, 400,
                      hosts > 1    ? "more than one Host header"
                      : hosts == 0 ? "HTTP/1.1 request without a Host header"
                                   : "invalid Host header");
    }
    if (head.chunked && head.versionMinor == 0) {
        head.keepAlive = false; // RFC 9112 6.1: a 1.0 message with Transfer-Encoding closes
    }
    if (head.contentLength > limits.maxBodyBytes) {
        return reject(head, 413, "request body too large");
    }
    head.headLength = pos;
    head.state = RequestHead::State::Complete;
    return head;
}

ChunkedBodyValidator::Result ChunkedBodyValidator::fail(const char *why)
{
    m_state = State::Error;
    m_error = why;
    return Result::Error;
}

ChunkedBodyValidator::Result ChunkedBodyValidator::feed(QByteArrayView data, qsizetype *consumed)
{
    qsizetype i = 0;
    const qsizetype n = data.size();
    const auto hexValue = [](char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
    };
    while (i < n && m_state != State::Done && m_state != State::Error) {
        const char c = data[i];
        // A size line (digits, spaces, extensions) is bounded on its own: every byte a client
        // sends counts against a limit.
        if (m_state == State::Size || m_state == State::SizeSpace || m_state == State::Extension) {
            if (++m_lineBytes > kMaxSizeLineBytes) {
                m_wireBytes += i;
                return fail("chunk size line longer than 4 KiB");
            }
        }
        switch (m_state) {
        case State::Size:
            if (hexValue(c) >= 0) {
                if (++m_digits > 15) {
                    return fail("chunk size too long");
                }
                m_size = m_size * 16 + hexValue(c);
            } else if (m_digits == 0) {
                return fail("chunk size is not hexadecimal");
            } else if (c == ' ' || c == '\t') {
                m_state = State::SizeSpace;
            } else if (c == ';') {
                m_state = State::Extension;
            } else if (c == '\r') {
                m_state = State::SizeLf;
            } else {
                return fail("chunk size is not hexadecimal");
            }
            ++i;
            break;
        case State::SizeSpace:
            if (c == ';') {
                m_state = State::Extension;
            } else if (c == '\r') {
                m_state = State::SizeLf;
            } else if (c != ' ' && c != '\t') {
                return fail("junk after chunk size");
            }
            ++i;
            break;
        case State::Extension:
            if (c == '\r') {
                m_state = State::SizeLf;
            } else if (c == '\n' || c == '\0') {
                return fail("bad chunk extension");
            }
            ++i;
            break;
        case State::SizeLf:
            if (c != '\n') {
                return fail("chunk size line must end with CRLF");
            }
            ++i;
            m_lineBytes = 0;
            if (m_size == 0) {
                m_state = State::TrailerStart;
            } else {
                m_remaining = m_size;
                m_state = State::Data;
            }
            break;
        case State::Data: {
            const qint64 take = std::min<qint64>(m_remaining, n - i);
            i += take;
            m_remaining -= take;
            m_dataBytes += take;
            if (m_remaining == 0) {
                m_state = State::DataCr;
            }
            break;
        }
        case State::DataCr:
            if (c != '\r') {
                return fail("chunk data longer than its size");
            }
            m_state = State::DataLf;
            ++i;
            break;
        case State::DataLf:
            if (c != '\n') {
                return fail("chunk data must end with CRLF");
            }
            m_state = State::Size;
            m_digits = 0;
            m_size = 0;
            m_lineBytes = 0;
            ++i;
            break;
        case State::TrailerStart:
            // QtHttpServer 6.4 calls the body done two bytes after the last chunk, so a trailer
            // field would be read as the next request (docs/QT64.md): refused, never parsed.
            if (c != '\r') {
                m_wireBytes += i;
                return fail("trailer fields are not accepted");
            }
            m_state = State::FinalLf;
            ++i;
            break;
        case State::FinalLf:
            if (c != '\n') {
                return fail("chunked body must end with CRLF");
            }
            m_state = State::Done;
            ++i;
            break;
        case State::Done:
        case State::Error:
            break;
        }
    }
    m_wireBytes += i;
    if (consumed) {
        *consumed = i;
    }
    return m_state == State::Done    ? Result::Done
           : m_state == State::Error ? Result::Error
                                     : Result::NeedMore;
}

} // namespace slp
