#include "requestparser.h"

namespace slp::mock {

namespace {

// Generous: the mock must accept whatever SLP forwards, but never grow without bound.
constexpr qsizetype MaxHeadBytes = 1024 * 1024;
constexpr qsizetype MaxLineBytes = 64 * 1024;

bool isTokenChar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return QByteArrayView("!#$%&'*+-.^_`|~").contains(c);
}

} // namespace

QByteArray Request::header(QByteArrayView name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

QList<QByteArray> Request::headerValues(QByteArrayView name) const
{
    QList<QByteArray> out;
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            out.append(h.second);
    }
    return out;
}

bool Request::hasHeader(QByteArrayView name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

bool Request::keepAlive() const
{
    bool close = false;
    bool keep = false;
    for (const QByteArray &v : headerValues("connection")) {
        for (const QByteArray &tok : v.split(',')) {
            const QByteArray t = tok.trimmed().toLower();
            close = close || t == "close";
            keep = keep || t == "keep-alive";
        }
    }
    if (close)
        return false;
    return version == "HTTP/1.1" || keep;
}

QByteArray Request::path() const
{
    const qsizetype q = target.indexOf('?');
    return q < 0 ? target : target.left(q);
}

QByteArray Request::query() const
{
    const qsizetype q = target.indexOf('?');
    return q < 0 ? QByteArray() : target.mid(q + 1);
}

void RequestParser::reset()
{
    m_state = State::Head;
    m_request = Request();
    m_remaining = 0;
    m_errorStatus = 400;
    m_error.clear();
}

Request RequestParser::take()
{
    Request r = std::move(m_request);
    reset();
    return r;
}

bool RequestParser::expectsContinue() const
{
    return m_request.version == "HTTP/1.1" &&
           m_request.header("expect").trimmed().toLower() == "100-continue";
}

RequestParser::Status RequestParser::fail(int status, const QByteArray &message)
{
    m_errorStatus = status;
    m_error = message;
    return Status::Error;
}

RequestParser::Status RequestParser::parseHead(QByteArray &buffer)
{
    // Tolerate stray CRLFs between keep-alive requests (RFC 9112 2.2).
    while (buffer.startsWith("\r\n"))
        buffer.remove(0, 2);
    const qsizetype end = buffer.indexOf("\r\n\r\n");
    if (end < 0) {
        if (buffer.size() > MaxHeadBytes)
            return fail(431, "request head too large");
        return Status::NeedMore;
    }
    const QByteArray head = buffer.left(end);
    buffer.remove(0, end + 4);

    const QList<QByteArray> lines = head.split('\n');
    QList<QByteArray> parts =
        lines.value(0).chopped(lines.value(0).endsWith('\r') ? 1 : 0).split(' ');
    if (parts.size() != 3 || parts[0].isEmpty() || parts[1].isEmpty())
        return fail(400, "bad request line");
    if (parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0")
        return fail(505, "unsupported HTTP version");
    m_request.method = parts[0];
    m_request.target = parts[1];
    m_request.version = parts[2];

    for (qsizetype i = 1; i < lines.size(); ++i) {
        QByteArray line = lines[i];
        if (line.endsWith('\r'))
            line.chop(1);
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            return fail(400, "bad header line");
        const QByteArray name = line.left(colon);
        for (char c : name) {
            if (!isTokenChar(c))
                return fail(400, "bad header name");
        }
        m_request.headers.append({name, line.mid(colon + 1).trimmed()});
    }

    const QByteArray te = m_request.header("transfer-encoding").trimmed().toLower();
    const QList<QByteArray> lengths = m_request.headerValues("content-length");
    if (!te.isEmpty()) {
        if (!lengths.isEmpty())
            return fail(400, "Content-Length with Transfer-Encoding");
        if (!te.endsWith("chunked"))
            return fail(400, "unsupported transfer-encoding");
        m_request.chunked = true;
        m_state = State::ChunkSize;
    } else if (!lengths.isEmpty()) {
        bool ok = false;
        const qint64 n = lengths.first().trimmed().toLongLong(&ok);
        for (const QByteArray &l : lengths) {
            if (l.trimmed() != lengths.first().trimmed())
                return fail(400, "conflicting Content-Length");
        }
        if (!ok || n < 0)
            return fail(400, "bad Content-Length");
        m_remaining = n;
        m_state = n > 0 ? State::LengthBody : State::Done;
    } else {
        m_state = State::Done;
    }
    return m_state == State::Done ? Status::Done : Status::HeadReady;
}

RequestParser::Status RequestParser::parse(QByteArray &buffer)
{
    if (m_state == State::Head) {
        const Status s = parseHead(buffer);
        if (s != Status::NeedMore || m_state != State::Head)
            return s;
        return Status::NeedMore;
    }
    // Bounded: every pass consumes input or returns.
    for (;;) {
        switch (m_state) {
        case State::Head:
        case State::Done:
            return Status::Done;
        case State::LengthBody: {
            const qint64 n = std::min<qint64>(m_remaining, buffer.size());
            m_request.body.append(buffer.constData(), n);
            buffer.remove(0, n);
            m_remaining -= n;
            if (m_remaining > 0)
                return Status::NeedMore;
            m_state = State::Done;
            return Status::Done;
        }
        case State::ChunkSize: {
            const qsizetype eol = buffer.indexOf("\r\n");
            if (eol < 0)
                return buffer.size() > MaxLineBytes ? fail(400, "chunk size line too long")
                                                    : Status::NeedMore;
            QByteArray line = buffer.left(eol);
            buffer.remove(0, eol + 2);
            const qsizetype semi = line.indexOf(';');
            if (semi >= 0)
                line.truncate(semi);
            line = line.trimmed();
            bool ok = false;
            const qint64 n = line.toLongLong(&ok, 16);
            if (line.isEmpty() || !ok || n < 0)
                return fail(400, "bad chunk size");
            m_remaining = n;
            m_state = n == 0 ? State::Trailers : State::ChunkData;
            break;
        }
        case State::ChunkData: {
            const qint64 n = std::min<qint64>(m_remaining, buffer.size());
            m_request.body.append(buffer.constData(), n);
            buffer.remove(0, n);
            m_remaining -= n;
            if (m_remaining > 0)
                return Status::NeedMore;
            m_state = State::ChunkDataEnd;
            break;
        }
        case State::ChunkDataEnd:
            if (buffer.size() < 2)
                return Status::NeedMore;
            if (!buffer.startsWith("\r\n"))
                return fail(400, "missing CRLF after chunk data");
            buffer.remove(0, 2);
            m_state = State::ChunkSize;
            break;
        case State::Trailers: {
            const qsizetype eol = buffer.indexOf("\r\n");
            if (eol < 0)
                return buffer.size() > MaxLineBytes ? fail(400, "trailer too long")
                                                    : Status::NeedMore;
            const bool last = eol == 0;
            buffer.remove(0, eol + 2);
            if (last) {
                m_state = State::Done;
                return Status::Done;
            }
            break;
        }
        }
    }
}

} // namespace slp::mock
