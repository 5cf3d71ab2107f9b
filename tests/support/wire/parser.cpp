// SPDX-License-Identifier: GPL-3.0-or-later
#include "parser.h"

#include <http_parser.h>

namespace slp::wire {

namespace {

// RFC 9110 5.6.2 token characters. Debian builds http-parser lenient (HTTP_PARSER_STRICT=0),
// which lets a space into a header name; a test library should not.
bool isToken(const QByteArray &name)
{
    if (name.isEmpty())
        return false;
    for (const char c : name) {
        const bool alnum =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && !QByteArrayView("!#$%&'*+-.^_`|~").contains(c))
            return false;
    }
    return true;
}

} // namespace

struct Parser::Callbacks
{
    static Parser *self(http_parser *p) { return static_cast<Parser *>(p->data); }

    static int messageBegin(http_parser *p)
    {
        Parser *s = self(p);
        s->m_head = Head();
        s->m_field.clear();
        s->m_value.clear();
        s->m_inValue = false;
        s->m_inMessage = true;
        s->m_headDone = false;
        s->m_interim = false;
        s->m_skipBody = false;
        return 0;
    }

    static int url(http_parser *p, const char *at, size_t n)
    {
        self(p)->m_head.target.append(at, qsizetype(n));
        return 0;
    }

    static int status(http_parser *p, const char *at, size_t n)
    {
        self(p)->m_head.reason.append(at, qsizetype(n));
        return 0;
    }

    static int headerField(http_parser *p, const char *at, size_t n)
    {
        Parser *s = self(p);
        if (s->m_inValue && !s->endHeader())
            return 1;
        if (s->m_keepHeaders)
            s->m_field.append(at, qsizetype(n));
        return 0;
    }

    static int headerValue(http_parser *p, const char *at, size_t n)
    {
        Parser *s = self(p);
        s->m_inValue = true;
        if (s->m_keepHeaders)
            s->m_value.append(at, qsizetype(n));
        return 0;
    }

    static int headersComplete(http_parser *p)
    {
        Parser *s = self(p);
        if (!s->endHeader())
            return -1; // -1: an error (1 would mean "no body")
        Head &h = s->m_head;
        h.version =
            "HTTP/" + QByteArray::number(p->http_major) + '.' + QByteArray::number(p->http_minor);
        h.chunked = (p->flags & F_CHUNKED) != 0;
        h.contentLength =
            (p->flags & F_CONTENTLENGTH) && !h.chunked ? qint64(p->content_length) : -1;
        h.upgrade = p->upgrade != 0;
        if (s->m_kind == Kind::Request) {
            h.method = http_method_str(http_method(p->method));
        } else {
            h.status = int(p->status_code);
            // RFC 9112 6.3: these never have a body, whatever their headers say (http-parser
            // would read a 304's Content-Length worth of the next response as its body).
            s->m_interim = h.interim();
            s->m_skipBody = s->m_headResponse || h.status == 204 || h.status == 304 ||
                            (h.status >= 100 && h.status < 200);
            if (s->m_skipBody)
                p->flags |= F_SKIPBODY; // so http_should_keep_alive sees no close-delimited body
        }
        h.keepAlive = http_should_keep_alive(p) != 0;
        s->m_headDone = !s->m_interim;
        if (s->onHead)
            s->onHead(h);
        return s->m_skipBody ? 1 : 0;
    }

    static int body(http_parser *p, const char *at, size_t n)
    {
        Parser *s = self(p);
        if (s->onBody)
            s->onBody(QByteArrayView(at, qsizetype(n)));
        return 0;
    }

    static int chunkHeader(http_parser *p)
    {
        self(p)->m_chunkSize = qint64(p->content_length);
        return 0;
    }

    static int chunkComplete(http_parser *p)
    {
        Parser *s = self(p);
        if (s->m_chunkSize > 0 && s->onChunk)
            s->onChunk(s->m_chunkSize);
        s->m_chunkSize = 0;
        return 0;
    }

    static int messageComplete(http_parser *p)
    {
        Parser *s = self(p);
        s->m_inMessage = false;
        if (s->m_interim) { // 100 Continue, 103 Early Hints: the final head follows
            s->m_interim = false;
            return 0;
        }
        s->m_headResponse = false;
        ++s->m_messages;
        if (s->onMessage)
            s->onMessage();
        if (s->m_stopAfterMessage)
            http_parser_pause(p, 1);
        return 0;
    }

    static const http_parser_settings &settings()
    {
        static const http_parser_settings table = [] {
            http_parser_settings t{};
            t.on_message_begin = messageBegin;
            t.on_url = url;
            t.on_status = status;
            t.on_header_field = headerField;
            t.on_header_value = headerValue;
            t.on_headers_complete = headersComplete;
            t.on_body = body;
            t.on_message_complete = messageComplete;
            t.on_chunk_header = chunkHeader;
            t.on_chunk_complete = chunkComplete;
            return t;
        }();
        return table;
    }
};

Parser::Parser(Kind kind) : m_kind(kind), m_parser(std::make_unique<http_parser>())
{
    reset();
}

Parser::~Parser() = default;

void Parser::reset()
{
    http_parser_init(m_parser.get(), m_kind == Kind::Request ? HTTP_REQUEST : HTTP_RESPONSE);
    m_parser->data = this;
    m_head = Head();
    m_field.clear();
    m_value.clear();
    m_inValue = false;
    m_inMessage = false;
    m_headDone = false;
    m_interim = false;
    m_skipBody = false;
    m_headResponse = false;
    m_chunkSize = 0;
    m_messages = 0;
    m_failure = Failure::None;
    m_error.clear();
    m_badName = QByteArray();
}

bool Parser::endHeader()
{
    if (m_inValue && m_keepHeaders) {
        if (!isToken(m_field)) {
            m_badName = m_field;
            return false;
        }
        m_head.headers.append({m_field, m_value.trimmed()});
    }
    m_field.clear();
    m_value.clear();
    m_inValue = false;
    return true;
}

void Parser::fail(Failure failure, QString why)
{
    m_failure = failure;
    m_error = std::move(why);
}

qsizetype Parser::feed(QByteArrayView data)
{
    if (failed() || data.isEmpty())
        return 0;
    http_parser *p = m_parser.get();
    if (HTTP_PARSER_ERRNO(p) == HPE_PAUSED)
        http_parser_pause(p, 0);
    const size_t parsed =
        http_parser_execute(p, &Callbacks::settings(), data.data(), size_t(data.size()));
    const auto err = http_errno(HTTP_PARSER_ERRNO(p));
    if (err == HPE_OK || err == HPE_PAUSED)
        return qsizetype(parsed);
    if (!m_badName.isNull()) {
        fail(Failure::Malformed, QStringLiteral("header name is not a token: \"%1\"")
                                     .arg(QString::fromLatin1(m_badName.left(100))));
        return qsizetype(parsed);
    }
    fail(err == HPE_HEADER_OVERFLOW ? Failure::HeadTooLarge : Failure::Malformed,
         QStringLiteral("%1 (%2)").arg(QString::fromLatin1(http_errno_description(err)),
                                       QString::fromLatin1(http_errno_name(err))));
    return qsizetype(parsed);
}

void Parser::finish()
{
    if (failed())
        return;
    http_parser *p = m_parser.get();
    if (HTTP_PARSER_ERRNO(p) == HPE_PAUSED)
        http_parser_pause(p, 0);
    http_parser_execute(p, &Callbacks::settings(), nullptr, 0); // ends a close-delimited body
    if (m_inMessage) {
        fail(Failure::Closed, m_headDone ? QStringLiteral("connection closed inside the body")
                                         : QStringLiteral("connection closed inside the head"));
    }
}

} // namespace slp::wire
