// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire/responseparser.h"

#include <mutex>

namespace slp {

namespace {
// A header name or value usually comes in one piece: one exact allocation, no growth.
void appendPiece(QByteArray &to, const char *at, size_t n)
{
    if (to.isNull())
        to = QByteArray(at, qsizetype(n));
    else
        to.append(at, qsizetype(n));
}
} // namespace

ResponseParser::ResponseParser()
{
    static std::once_flag once;
    // Process-wide in http-parser 2.9; SLP has no other user of the library.
    std::call_once(once, [] { http_parser_set_max_header_size(kMaxHeadBytes); });
    reset(false);
}

void ResponseParser::reset(bool headRequest, bool acceptUpgrade)
{
    http_parser_init(&m_parser, HTTP_RESPONSE);
    m_parser.data = this;
    m_headRequest = headRequest;
    m_acceptUpgrade = acceptUpgrade;
    m_upgraded = false;
    m_upgradeBytes.clear();
    m_pendingHead = UpstreamHead();
    m_field.clear();
    m_value.clear();
    m_inValue = false;
    m_interim = false;
    m_headPending = false;
    m_messageComplete = false;
    m_extraBytes = false;
    m_keepAlive = false;
    m_inStatusLine = true;
    m_statusStarted = false;
    m_statusCr = false;
    m_headError.clear();
}

void ResponseParser::feed(const QByteArray &data)
{
    if (m_upgraded) {
        m_upgradeBytes.append(data); // past the 101: not HTTP any more
        return;
    }
    if (hasError())
        return;
    m_feeding = &data;
    const qsizetype size = data.size();
    qsizetype offset = 0;
    while (offset < size && !m_messageComplete) {
        if (m_inStatusLine) {
            scanStatusLine(data.constData() + offset, size - offset);
            if (!m_headError.isEmpty())
                break;
        }
        offset += qsizetype(http_parser_execute(&m_parser, &settings(), data.constData() + offset,
                                                size_t(size - offset)));
        if (HTTP_PARSER_ERRNO(&m_parser) != HPE_PAUSED || m_messageComplete)
            break;
        http_parser_pause(&m_parser, 0); // an interim head ended: the next status line follows
    }
    m_feeding = nullptr;
    if (m_upgraded) {
        m_upgradeBytes = data.mid(offset);
        return;
    }
    if (m_messageComplete && offset < size)
        m_extraBytes = true; // bytes after the response: the connection is spent
}

void ResponseParser::scanStatusLine(const char *data, qsizetype size)
{
    for (qsizetype i = 0; i < size && m_inStatusLine; ++i) {
        const char c = data[i];
        if (m_statusCr) {
            if (c != '\n') {
                m_headError = QStringLiteral("a bare CR in the status line");
                return;
            }
            m_statusCr = false;
            m_inStatusLine = false;
        } else if (!m_statusStarted && (c == '\r' || c == '\n')) {
            continue; // empty lines before a head are skipped (RFC 9112 2.2)
        } else if (c == '\0') {
            m_headError = QStringLiteral("a NUL in the status line");
            return;
        } else if (c == '\r') {
            m_statusCr = true;
        } else if (c == '\n') {
            m_inStatusLine = false;
        }
        m_statusStarted = true;
    }
}

void ResponseParser::feedEof()
{
    if (!hasError() && !m_messageComplete)
        http_parser_execute(&m_parser, &settings(), nullptr, 0);
}

bool ResponseParser::hasError() const
{
    if (!m_headError.isEmpty())
        return true;
    const auto error = HTTP_PARSER_ERRNO(&m_parser);
    // A pause is how a complete response stops the parser, not an error.
    return (error != HPE_OK && error != HPE_PAUSED) || (m_parser.upgrade && !m_upgraded);
}

QString ResponseParser::errorText() const
{
    if (!m_headError.isEmpty())
        return m_headError;
    if (m_parser.upgrade)
        return QStringLiteral("an unasked-for protocol upgrade");
    const auto error = http_errno(HTTP_PARSER_ERRNO(&m_parser));
    if (error == HPE_HEADER_OVERFLOW)
        return QStringLiteral("larger than 64 KiB");
    return QString::fromLatin1(http_errno_description(error));
}

bool ResponseParser::takeHead(UpstreamHead *head)
{
    if (!m_headPending)
        return false;
    m_headPending = false;
    *head = std::move(m_pendingHead);
    m_pendingHead = UpstreamHead();
    return true;
}

QByteArray ResponseParser::read(qint64 maxBytes)
{
    QByteArray out;
    while (!m_chunks.empty() && out.size() < maxBytes) {
        QByteArray &front = m_chunks.front();
        const qsizetype frontSize = front.size();
        const qsizetype take =
            qsizetype(std::min<qint64>(frontSize - m_chunkOffset, maxBytes - qint64(out.size())));
        if (out.isEmpty() && m_chunkOffset == 0 && take == frontSize)
            out = std::move(front); // no copy for a whole piece
        else
            out.append(front.constData() + m_chunkOffset, take);
        m_chunkOffset += take;
        if (m_chunkOffset >= frontSize) {
            m_chunks.pop_front();
            m_chunkOffset = 0;
        }
    }
    m_buffered -= out.size();
    return out;
}

void ResponseParser::endHeader()
{
    if (!m_field.isEmpty())
        m_pendingHead.headers.append({std::move(m_field), std::move(m_value)});
    m_field = QByteArray(); // moved from: null, the next piece allocates exactly
    m_value = QByteArray();
    m_inValue = false;
}

int ResponseParser::headersComplete()
{
    endHeader();
    const int status = int(m_parser.status_code);
    if (status == 101) {
        // Only an upgrade SLP relays may switch, and only with Upgrade and Connection:
        // upgrade (http-parser sets `upgrade` for exactly that).
        if (!m_acceptUpgrade || !m_parser.upgrade)
            return -1;
        m_upgraded = true;
        m_pendingHead.status = status;
        m_headPending = true;
        return 1; // no body: what follows is the new protocol's
    }
    // http-parser 2.9 skips the body of a 1xx, 204 or 304 only when it has no
    // Content-Length: these never have one, whatever the head says (RFC 9112 6.3).
    if (status >= 100 && status < 200) {
        m_interim = true; // 100 Continue, 103 Early Hints: skipped
        return 1;
    }
    m_pendingHead.status = status;
    if ((m_parser.flags & F_CONTENTLENGTH) && !(m_parser.flags & F_CHUNKED))
        m_pendingHead.contentLength = qint64(m_parser.content_length);
    m_headPending = true;
    // HEAD: a length but no body
    return m_headRequest || statusHasNoBody(status) ? 1 : 0;
}

int ResponseParser::messageComplete()
{
    if (m_interim) {
        m_interim = false;
        m_inStatusLine = true;
        m_statusStarted = false;
        http_parser_pause(&m_parser, 1); // feed() checks the next status line first
        return 0;
    }
    m_keepAlive = http_should_keep_alive(&m_parser) != 0;
    m_messageComplete = true;
    http_parser_pause(&m_parser, 1); // what follows in the same read is not a response
    return 0;
}

const http_parser_settings &ResponseParser::settings()
{
    static const http_parser_settings table = [] {
        http_parser_settings s{};
        s.on_message_begin = [](http_parser *p) {
            ResponseParser *c = self(p);
            if (c->m_messageComplete) {
                c->m_extraBytes = true; // bytes after the response: the connection is spent
                return 1;
            }
            c->m_pendingHead = UpstreamHead();
            c->m_field.clear();
            c->m_value.clear();
            c->m_inValue = false;
            return 0;
        };
        s.on_status = [](http_parser *p, const char *at, size_t n) {
            self(p)->m_pendingHead.reason.append(at, qsizetype(n));
            return 0;
        };
        s.on_header_field = [](http_parser *p, const char *at, size_t n) {
            ResponseParser *c = self(p);
            if (c->m_inValue)
                c->endHeader();
            appendPiece(c->m_field, at, n);
            return 0;
        };
        s.on_header_value = [](http_parser *p, const char *at, size_t n) {
            ResponseParser *c = self(p);
            c->m_inValue = true;
            appendPiece(c->m_value, at, n);
            return 0;
        };
        s.on_headers_complete = [](http_parser *p) { return self(p)->headersComplete(); };
        s.on_body = [](http_parser *p, const char *at, size_t n) {
            ResponseParser *c = self(p);
            const QByteArray *piece = c->m_feeding;
            if (piece && at == piece->constData() && qsizetype(n) == piece->size())
                c->m_chunks.push_back(*piece); // shared, not copied
            else
                c->m_chunks.emplace_back(at, qsizetype(n));
            c->m_buffered += qint64(n);
            c->m_bodyGrew = true;
            return 0;
        };
        s.on_message_complete = [](http_parser *p) { return self(p)->messageComplete(); };
        return s;
    }();
    return table;
}

} // namespace slp
