// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/requesthead.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace slp {

namespace {
// QtHttpServer 6.4's own header limits (QHttpHeaderParser): more fields, or a longer one, and
// it drops the lot. SLP refuses such heads first; the field size counts its CRLF, so SLP is
// never the more lenient of the two.
constexpr int kMaxFields = 100;
constexpr qsizetype kMaxFieldBytes = 100 * 1024;

// RFC 3986 host [ ":" port ]: an IP-literal in brackets, or reg-name / IPv4 characters.
bool isValidHost(QByteArrayView value)
{
    qsizetype i = 0;
    if (value.startsWith('[')) {
        const qsizetype close = value.indexOf(']');
        if (close < 2)
            return false;
        for (const char c : value.sliced(1, close - 1))
            if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
                return false;
        i = close + 1;
    } else {
        while (i < value.size() && value[i] != ':') {
            const char c = value[i];
            if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("-._~%!$&'()*+,;=", c))
                return false;
            ++i;
        }
        if (i == 0)
            return false;
    }
    if (i == value.size())
        return true;
    if (value[i] != ':' || value.size() - i - 1 > 5)
        return false;
    for (const char c : value.sliced(i + 1))
        if (c < '0' || c > '9')
            return false;
    return true;
}

// A path segment that is "." or "..", also written with %2e: resolved by some hops and not
// by others, so what is routed would not be what is forwarded.
bool hasDotSegment(QByteArrayView target)
{
    const qsizetype query = target.indexOf('?');
    const QByteArrayView path = query < 0 ? target : target.first(query);
    if (!path.contains('.') && !path.contains('%'))
        return false; // the common case, without a copy
    for (const QByteArray &segment : path.toByteArray().split('/')) {
        const QByteArray plain = segment.toLower().replace("%2e", ".");
        if (plain == "." || plain == "..")
            return true;
    }
    return false;
}

} // namespace

namespace {

// The field facts the framing decision needs once the blank line has arrived.
struct FieldFacts
{
    bool sawContentLength = false;
    bool sawTransferEncoding = false;
    int hosts = 0;
    bool hostValid = true;
};

// One reading of a head, step by step: the request line, each field line, then the framing
// decision. Every line is checked the same way whether it is complete or still arriving, limits
// first: the verdict must not depend on where a read ended (a request arrives in any number of
// reads; fuzz_request_split holds this). Each step returns false once the head is decided
// short of Complete: Incomplete (more bytes needed) or Rejected.
class HeadParser
{
public:
    HeadParser(QByteArrayView data, const RequestHeadLimits &limits)
        : m_data(data), m_limits(limits)
    {}

    RequestHead run()
    {
        if (skipBlankLines() && readRequestLine() && readFields())
            decideFraming();
        return std::move(m_head);
    }

private:
    // Field lines up to the blank line; true once it has arrived.
    bool readFields()
    {
        for (;;) {
            QByteArrayView field;
            if (!readFieldLine(&field))
                return false;
            if (field.isEmpty())
                return true;
            if (!takeField(field))
                return false;
        }
    }

    bool reject(int status, QByteArray message)
    {
        m_head.state = RequestHead::State::Rejected;
        m_head.errorStatus = status;
        m_head.errorMessage = std::move(message);
        return false;
    }

    // The stray CRLFs some clients send between requests (RFC 9112 2.2) are tolerated; they
    // count toward max_header_bytes like every other byte of the head.
    bool skipBlankLines()
    {
        while (m_start + 1 < m_data.size() && m_data[m_start] == '\r' &&
               m_data[m_start + 1] == '\n')
            m_start += 2;
        if (m_start > m_limits.maxHeaderBytes)
            return reject(431, "request header fields too large");
        return true;
    }

    bool readRequestLine()
    {
        const qsizetype lineEnd = m_data.indexOf('\n', m_start);
        const qsizetype seenEnd = lineEnd < 0 ? m_data.size() : lineEnd; // so far, no LF
        const QByteArrayView seen = m_data.sliced(m_start, seenEnd - m_start);
        // Of a NUL and the byte past the limit, the one that came first decides (a read may
        // end between them).
        const qsizetype tooLongAt =
            seenEnd > m_limits.maxHeaderBytes ? m_limits.maxHeaderBytes - m_start : -1;
        if (const qsizetype nul = seen.indexOf('\0');
            nul >= 0 && (tooLongAt < 0 || nul < tooLongAt))
            return reject(400, "NUL byte in request line");
        if (tooLongAt >= 0) {
            // Still inside the blank lines before a request: they are head bytes too.
            return seen.isEmpty() || seen == "\r" ? reject(431, "request header fields too large")
                                                  : reject(414, "request line too long");
        }
        if (lineEnd < 0)
            return false; // Incomplete
        if (lineEnd == m_start || m_data[lineEnd - 1] != '\r')
            return reject(400, "request line must end with CRLF");
        m_pos = lineEnd + 1;
        return takeRequestLine(m_data.sliced(m_start, lineEnd - 1 - m_start));
    }

    // Method SP target SP version, the line without its CRLF.
    bool takeRequestLine(QByteArrayView line)
    {
        if (line.startsWith("PRI * HTTP/2")) {
            return reject(505, "HTTP/2 is not served here: speak HTTP/1.1 (put TLS and HTTP/2 in "
                               "front, e.g. Caddy)");
        }
        const qsizetype sp1 = line.indexOf(' ');
        const qsizetype sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
        if (sp1 <= 0 || sp2 < 0 || line.indexOf(' ', sp2 + 1) >= 0)
            return reject(400, "malformed request line");
        m_head.method = line.first(sp1).toByteArray();
        if (!std::all_of(m_head.method.cbegin(), m_head.method.cend(), isTokenChar))
            return reject(400, "malformed method");
        m_head.target = line.sliced(sp1 + 1, sp2 - sp1 - 1).toByteArray();
        return checkTarget() && takeVersion(line.sliced(sp2 + 1));
    }

    bool checkTarget()
    {
        const QByteArray &target = m_head.target;
        if (target.isEmpty())
            return reject(400, "empty request target");
        if (target.size() > m_limits.maxHeaderBytes)
            return reject(414, "request URL too long");
        if (!target.startsWith('/'))
            return reject(400, "request target must be a path (origin form, starting with /)");
        if (hasDotSegment(target))
            return reject(400, "request target has a dot segment (. or ..)");
        for (const char c : target) {
            const auto u = static_cast<unsigned char>(c);
            if (u <= 0x20 || u == 0x7f)
                return reject(400, "control character in request target");
        }
        return true;
    }

    bool takeVersion(QByteArrayView version)
    {
        if (version == "HTTP/1.1") {
            m_head.versionMinor = 1;
        } else if (version == "HTTP/1.0") {
            m_head.versionMinor = 0;
            m_head.keepAlive = false;
        } else if (version.startsWith("HTTP/")) {
            return reject(505, "HTTP version not supported: use HTTP/1.1");
        } else {
            return reject(400, "malformed request line");
        }
        return true;
    }

    // The next field line without its CRLF into `field`; empty: the blank line ending the head.
    bool readFieldLine(QByteArrayView *field)
    {
        if (m_pos > m_limits.maxHeaderBytes)
            return reject(431, "request header fields too large");
        const qsizetype end = m_data.indexOf('\n', m_pos);
        if (!checkLineLimits(m_data.sliced(m_pos, (end < 0 ? m_data.size() : end) - m_pos)))
            return false;
        if (end < 0)
            return false; // Incomplete
        if (end == m_pos || m_data[end - 1] != '\r')
            return reject(400, "header line must end with CRLF");
        *field = m_data.sliced(m_pos, end - 1 - m_pos);
        m_pos = end + 1;
        return true;
    }

    // A field line so far (`part`, without its LF), against the head's, the field count's and
    // the field size's limits. QtHttpServer parses the head again and silently drops every
    // field past its own limits, then frames the body without them (docs/QT64.md, "Qt parses
    // the head a second time").
    bool checkLineLimits(QByteArrayView part)
    {
        // Where in `part` each limit is first passed (-1: not yet).
        const qsizetype headAt =
            m_pos + part.size() > m_limits.maxHeaderBytes ? m_limits.maxHeaderBytes - m_pos : -1;
        const qsizetype fieldsAt = m_head.headers.size() < kMaxFields || part.isEmpty() ? -1
                                   : part.front() != '\r'                               ? 0
                                   : part.size() > 1                                    ? 1
                                                     : -1; // "\r": maybe the blank line
        const qsizetype fieldAt = part.size() + 1 > kMaxFieldBytes ? kMaxFieldBytes - 1 : -1;
        qsizetype limitAt = -1;
        for (const qsizetype at : {headAt, fieldsAt, fieldAt})
            if (at >= 0 && (limitAt < 0 || at < limitAt))
                limitAt = at;
        // Of a NUL and the byte past a limit, the one that came first decides.
        if (const qsizetype nul = part.indexOf('\0'); nul >= 0 && (limitAt < 0 || nul < limitAt))
            return reject(400, "NUL byte in header");
        if (limitAt < 0)
            return true;
        return limitAt == headAt     ? reject(431, "request header fields too large")
               : limitAt == fieldsAt ? reject(431, "more than 100 header fields")
                                     : reject(431, "a header field larger than 100 KiB");
    }

    // One field line: its syntax, then what it means for the request.
    bool takeField(QByteArrayView field)
    {
        if (field.front() == ' ' || field.front() == '\t')
            return reject(400, "obsolete line folding in header");
        const qsizetype colon = field.indexOf(':');
        if (colon <= 0)
            return reject(400, "malformed header line");
        const QByteArrayView name = field.first(colon);
        if (!std::all_of(name.begin(), name.end(), isTokenChar))
            return reject(400, "invalid character in header name");
        const QByteArrayView value = trimOws(field.sliced(colon + 1));
        for (const char c : value)
            if (c == '\r' || c == '\n' || c == '\0')
                return reject(400, "CR, LF or NUL in a header value");
        if (!takeFieldMeaning(name, value))
            return false;
        m_head.headers.append({name.toByteArray(), value.toByteArray()});
        return true;
    }

    // The fields SLP itself acts on: framing, Connection, Host, Expect.
    bool takeFieldMeaning(QByteArrayView name, QByteArrayView value)
    {
        if (equalsNoCase(name, "content-length"))
            return takeContentLength(value);
        if (equalsNoCase(name, "transfer-encoding")) {
            if (m_facts.sawTransferEncoding || !equalsNoCase(value, "chunked"))
                return reject(501, "unsupported Transfer-Encoding: only chunked is accepted");
            m_facts.sawTransferEncoding = true;
            m_head.chunked = true;
        } else if (equalsNoCase(name, "connection")) {
            if (hasToken(value, "close"))
                m_head.keepAlive = false;
            else if (hasToken(value, "keep-alive") && m_head.versionMinor == 0)
                m_head.keepAlive = true;
        } else if (equalsNoCase(name, "host")) {
            ++m_facts.hosts;
            m_facts.hostValid = m_facts.hostValid && isValidHost(value);
        } else if (equalsNoCase(name, "expect")) {
            if (!equalsNoCase(value, "100-continue"))
                return reject(417, "unsupported Expect");
            m_head.expectContinue = m_head.versionMinor == 1;
        }
        return true;
    }

    bool takeContentLength(QByteArrayView value)
    {
        bool ok = !value.isEmpty() && std::all_of(value.begin(), value.end(),
                                                  [](char c) { return c >= '0' && c <= '9'; });
        const qint64 length = ok && value.size() <= 18 ? value.toLongLong(&ok) : -1;
        if (!ok || length < 0)
            return reject(400, "invalid Content-Length");
        if (m_facts.sawContentLength && length != m_head.contentLength)
            return reject(400, "two different Content-Length headers");
        m_facts.sawContentLength = true;
        m_head.contentLength = length;
        return true;
    }

    // After the blank line: how the body is framed, whether the connection stays, the Host rule.
    bool decideFraming()
    {
        if (m_facts.sawContentLength && m_facts.sawTransferEncoding)
            return reject(400, "Content-Length together with Transfer-Encoding");
        const int hosts = m_facts.hosts;
        if (hosts > 1 || !m_facts.hostValid || (hosts == 0 && m_head.versionMinor == 1)) {
            return reject(400, hosts > 1    ? "more than one Host header"
                               : hosts == 0 ? "HTTP/1.1 request without a Host header"
                                            : "invalid Host header");
        }
        if (m_head.chunked && m_head.versionMinor == 0)
            m_head.keepAlive = false; // RFC 9112 6.1: a 1.0 message with Transfer-Encoding closes
        if (m_head.contentLength > m_limits.maxBodyBytes)
            return reject(413, "request body too large");
        m_head.webSocketUpgrade = isWebSocketUpgradeRequest(
            m_head.method, m_head.headers,
            m_head.chunked ? 1 : std::max<qint64>(m_head.contentLength, 0));
        m_head.headLength = m_pos;
        m_head.state = RequestHead::State::Complete;
        return true;
    }

    QByteArrayView m_data;
    const RequestHeadLimits &m_limits;
    RequestHead m_head;
    FieldFacts m_facts;
    qsizetype m_start = 0; // the request line's first byte
    qsizetype m_pos = 0;   // the next field line's first byte
};

} // namespace

RequestHead parseRequestHead(QByteArrayView data, const RequestHeadLimits &limits)
{
    return HeadParser(data, limits).run();
}

} // namespace slp
