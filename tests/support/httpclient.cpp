#include "httpclient.h"

#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QTcpSocket>
#include <QTimer>
#include <QUrl>

namespace slp::test {

namespace {

bool waitOn(QTcpSocket *socket, int timeoutMs, bool forRead)
{
    // A local loop rather than waitForReadyRead: other objects of the test keep running.
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    if (forRead)
        QObject::connect(socket, &QTcpSocket::readyRead, &loop, &QEventLoop::quit);
    else
        QObject::connect(socket, &QTcpSocket::bytesWritten, &loop, &QEventLoop::quit);
    QObject::connect(socket, &QTcpSocket::connected, &loop, &QEventLoop::quit);
    QObject::connect(socket, &QTcpSocket::disconnected, &loop, &QEventLoop::quit);
    QObject::connect(socket, &QTcpSocket::errorOccurred, &loop, &QEventLoop::quit);
    timer.start(std::max(0, timeoutMs));
    loop.exec();
    return timer.isActive();
}

// Incremental HTTP/1.x response parser.
class ResponseParser
{
public:
    explicit ResponseParser(HttpResult &r, bool headRequest) : m_r(r), m_head(headRequest) {}

    // Consumes from data what belongs to this response; returns true when it is complete.
    bool feed(QByteArray &data, qint64 ms)
    {
        bool readBody = false;
        for (;;) {
            switch (m_state) {
            case State::Head: {
                // Search the accumulated head: its blank line may straddle two reads.
                m_headBuf += data;
                data.clear();
                const qsizetype end = m_headBuf.indexOf("\r\n\r\n");
                if (end < 0)
                    return false;
                data = m_headBuf.mid(end + 4);
                m_headBuf.truncate(end + 4);
                m_r.raw += m_headBuf;
                if (!parseHead(ms))
                    return true;
                break;
            }
            case State::Length: {
                const qint64 n = std::min<qint64>(m_remaining, data.size());
                take(data, n, readBody, ms);
                m_remaining -= n;
                if (m_remaining > 0)
                    return false;
                return finish();
            }
            case State::Close:
                take(data, data.size(), readBody, ms);
                return false;
            case State::ChunkSize: {
                const qsizetype eol = data.indexOf("\r\n");
                if (eol < 0)
                    return stash(data);
                QByteArray line = data.left(eol);
                m_r.raw += data.left(eol + 2);
                data.remove(0, eol + 2);
                if (const qsizetype semi = line.indexOf(';'); semi >= 0)
                    line.truncate(semi);
                bool ok = false;
                m_remaining = line.trimmed().toLongLong(&ok, 16);
                if (!ok || m_remaining < 0) {
                    m_r.error = QStringLiteral("bad chunk size line");
                    return true;
                }
                m_state = m_remaining == 0 ? State::Trailers : State::ChunkData;
                break;
            }
            case State::ChunkData: {
                const qint64 n = std::min<qint64>(m_remaining, data.size());
                m_r.body += data.left(n);
                m_r.raw += data.left(n);
                data.remove(0, n);
                m_remaining -= n;
                if (m_remaining > 0)
                    return false;
                m_r.chunkArrivalMs << ms;
                m_state = State::ChunkEnd;
                break;
            }
            case State::ChunkEnd:
                if (data.size() < 2)
                    return stash(data);
                if (!data.startsWith("\r\n")) {
                    m_r.error = QStringLiteral("missing CRLF after chunk");
                    return true;
                }
                m_r.raw += "\r\n";
                data.remove(0, 2);
                m_state = State::ChunkSize;
                break;
            case State::Trailers: {
                const qsizetype eol = data.indexOf("\r\n");
                if (eol < 0)
                    return stash(data);
                m_r.raw += data.left(eol + 2);
                data.remove(0, eol + 2);
                if (eol == 0)
                    return finish();
                break;
            }
            case State::Done:
                return true;
            }
        }
    }

    // The connection closed: decide what we have.
    void closed()
    {
        m_r.peerClosed = true;
        m_r.raw += m_headBuf + m_carry;
        if (m_state == State::Close) {
            m_r.complete = true;
            return;
        }
        if (m_state == State::Done)
            return;
        m_r.complete = false;
        if (m_r.error.isEmpty()) {
            m_r.error = m_state == State::Head
                            ? QStringLiteral("connection closed before the response head")
                            : QStringLiteral("connection closed before the end of the body");
        }
    }

    // Bytes held back waiting for a full line (chunk framing split across reads).
    QByteArray m_carry;

private:
    enum class State
    {
        Head,
        Length,
        Close,
        ChunkSize,
        ChunkData,
        ChunkEnd,
        Trailers,
        Done
    };

    bool stash(QByteArray &data)
    {
        m_carry = data;
        data.clear();
        return false;
    }

    void take(QByteArray &data, qint64 n, bool &counted, qint64 ms)
    {
        if (n <= 0)
            return;
        m_r.body += data.left(n);
        m_r.raw += data.left(n);
        data.remove(0, n);
        if (!counted)
            m_r.chunkArrivalMs << ms;
        counted = true;
    }

    bool finish()
    {
        m_state = State::Done;
        m_r.complete = true;
        return true;
    }

    bool parseHead(qint64 ms)
    {
        const QByteArray head = m_headBuf.left(m_headBuf.size() - 4);
        m_headBuf.clear();
        const QList<QByteArray> lines = head.split('\n');
        QByteArray statusLine = lines.value(0);
        if (statusLine.endsWith('\r'))
            statusLine.chop(1);
        const qsizetype sp1 = statusLine.indexOf(' ');
        if (!statusLine.startsWith("HTTP/") || sp1 < 0) {
            m_r.error =
                QStringLiteral("malformed status line: %1").arg(QString::fromLatin1(statusLine));
            return false;
        }
        const qsizetype sp2 = statusLine.indexOf(' ', sp1 + 1);
        bool ok = false;
        const int status = statusLine.mid(sp1 + 1, sp2 < 0 ? -1 : sp2 - sp1 - 1).toInt(&ok);
        if (!ok) {
            m_r.error =
                QStringLiteral("malformed status line: %1").arg(QString::fromLatin1(statusLine));
            return false;
        }
        if (status >= 100 && status < 200 && status != 101) {
            m_r.interimStatuses << status;
            return true; // the final head follows
        }
        m_r.status = status;
        m_r.version = statusLine.left(sp1);
        m_r.reason = sp2 < 0 ? QByteArray() : statusLine.mid(sp2 + 1);
        m_r.headMs = ms;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            QByteArray line = lines[i];
            if (line.endsWith('\r'))
                line.chop(1);
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0) {
                m_r.error =
                    QStringLiteral("malformed header line: %1").arg(QString::fromLatin1(line));
                return false;
            }
            m_r.headers.append({line.left(colon), line.mid(colon + 1).trimmed()});
        }
        const QByteArray te = m_r.header("transfer-encoding").toLower();
        if (m_head || status == 204 || status == 304) {
            m_state = State::Done;
            m_r.complete = true;
        } else if (te.contains("chunked")) {
            m_state = State::ChunkSize;
        } else if (m_r.hasHeader("content-length")) {
            m_remaining = m_r.header("content-length").trimmed().toLongLong(&ok);
            if (!ok || m_remaining < 0) {
                m_r.error = QStringLiteral("bad Content-Length");
                return false;
            }
            m_state = m_remaining == 0 ? State::Done : State::Length;
            m_r.complete = m_remaining == 0;
        } else {
            m_state = State::Close;
        }
        return true;
    }

    HttpResult &m_r;
    bool m_head;
    State m_state = State::Head;
    QByteArray m_headBuf;
    qint64 m_remaining = 0;
};

} // namespace

QByteArray HttpResult::header(QByteArrayView name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

QList<QByteArray> HttpResult::headerValues(QByteArrayView name) const
{
    QList<QByteArray> out;
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            out << h.second;
    }
    return out;
}

bool HttpResult::hasHeader(QByteArrayView name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

RawConnection::RawConnection() : m_socket(std::make_unique<QTcpSocket>())
{
    m_clock.start();
}

RawConnection::~RawConnection()
{
    m_socket->abort();
}

bool RawConnection::connectTo(const QString &host, quint16 port, int timeoutMs)
{
    m_closed = false;
    m_pending.clear();
    m_socket->connectToHost(host, port);
    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    while (m_socket->state() != QAbstractSocket::ConnectedState) {
        if (m_socket->state() == QAbstractSocket::UnconnectedState || deadline.hasExpired())
            return false;
        waitOn(m_socket.get(), static_cast<int>(deadline.remainingTime()), true);
    }
    return true;
}

bool RawConnection::send(const QByteArray &bytes, int timeoutMs)
{
    m_clock.restart();
    if (m_socket->state() != QAbstractSocket::ConnectedState)
        return false;
    m_socket->write(bytes);
    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    while (m_socket->bytesToWrite() > 0) {
        if (m_socket->state() != QAbstractSocket::ConnectedState || deadline.hasExpired())
            return false;
        // Read meanwhile so a server that answers early cannot deadlock us.
        drain();
        waitOn(m_socket.get(), static_cast<int>(std::min<qint64>(50, deadline.remainingTime())),
               false);
    }
    return true;
}

void RawConnection::drain()
{
    const QByteArray fresh = m_socket->readAll();
    if (!fresh.isEmpty())
        m_pending.append({fresh, m_clock.elapsed()});
    if (m_socket->state() == QAbstractSocket::UnconnectedState && m_socket->bytesAvailable() == 0)
        m_closed = true;
}

bool RawConnection::readMore(int timeoutMs)
{
    const qsizetype before = m_pending.size();
    drain();
    if (m_pending.size() > before)
        return true;
    if (m_closed || timeoutMs <= 0)
        return false;
    waitOn(m_socket.get(), timeoutMs, true);
    drain();
    return m_pending.size() > before;
}

HttpResult RawConnection::readResponse(int timeoutMs, bool headRequest)
{
    HttpResult r;
    ResponseParser parser(r, headRequest);
    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    for (;;) {
        while (!m_pending.isEmpty()) {
            auto [data, ms] = m_pending.takeFirst();
            if (!parser.m_carry.isEmpty()) {
                data.prepend(parser.m_carry);
                parser.m_carry.clear();
            }
            const bool done = parser.feed(data, ms);
            if (!parser.m_carry.isEmpty() && data.isEmpty() && !done)
                continue;
            if (done) {
                if (!data.isEmpty())
                    m_pending.prepend({data, ms}); // the next pipelined response
                r.elapsedMs = m_clock.elapsed();
                if (!r.error.isEmpty())
                    r.complete = false;
                return r;
            }
        }
        if (m_closed) {
            parser.closed();
            r.elapsedMs = m_clock.elapsed();
            return r;
        }
        if (deadline.hasExpired()) {
            r.error = QStringLiteral("timed out after %1 ms").arg(timeoutMs);
            r.complete = false;
            r.elapsedMs = m_clock.elapsed();
            return r;
        }
        readMore(static_cast<int>(deadline.remainingTime()));
    }
}

bool RawConnection::waitForData(QByteArrayView needle, int timeoutMs)
{
    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    for (;;) {
        if (received().contains(needle))
            return true;
        if (m_closed || deadline.hasExpired())
            return false;
        readMore(static_cast<int>(deadline.remainingTime()));
    }
}

QByteArray RawConnection::received() const
{
    QByteArray out;
    for (const auto &p : m_pending)
        out += p.first;
    return out;
}

bool RawConnection::waitForClosed(int timeoutMs)
{
    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    for (;;) {
        drain();
        if (m_closed)
            return true;
        if (deadline.hasExpired())
            return false;
        readMore(static_cast<int>(deadline.remainingTime()));
    }
}

bool RawConnection::isOpen() const
{
    return !m_closed && m_socket->state() == QAbstractSocket::ConnectedState;
}

void RawConnection::close()
{
    m_socket->disconnectFromHost();
}

void RawConnection::abort()
{
    m_socket->abort();
    m_closed = true;
}

QString RawConnection::errorString() const
{
    return m_socket->errorString();
}

HttpResult rawHttp(const QString &host, quint16 port, const QByteArray &request, int timeoutMs)
{
    RawConnection conn;
    QElapsedTimer clock;
    clock.start();
    if (!conn.connectTo(host, port, timeoutMs)) {
        HttpResult r;
        r.error = QStringLiteral("connect to %1:%2 failed: %3")
                      .arg(host)
                      .arg(port)
                      .arg(conn.errorString());
        return r;
    }
    const int left = static_cast<int>(std::max<qint64>(1, timeoutMs - clock.elapsed()));
    conn.send(request, left);
    const bool head = request.startsWith("HEAD ");
    return conn.readResponse(static_cast<int>(std::max<qint64>(1, timeoutMs - clock.elapsed())),
                             head);
}

QByteArray buildRequest(const QByteArray &method, const QString &url, const QByteArray &body,
                        const HeaderList &headers)
{
    const QUrl u(url);
    QByteArray target = u.path(QUrl::FullyEncoded).toLatin1();
    if (target.isEmpty())
        target = "/";
    if (u.hasQuery())
        target += '?' + u.query(QUrl::FullyEncoded).toLatin1();
    auto has = [&](QByteArrayView name) {
        for (const auto &h : headers) {
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return true;
        }
        return false;
    };
    QByteArray out = method + ' ' + target + " HTTP/1.1\r\n";
    if (!has("host"))
        out += "Host: " + u.host().toLatin1() +
               (u.port() > 0 ? ':' + QByteArray::number(u.port()) : QByteArray()) + "\r\n";
    for (const auto &h : headers)
        out += h.first + ": " + h.second + "\r\n";
    const bool wantsLength =
        !body.isEmpty() || method == "POST" || method == "PUT" || method == "PATCH";
    if (wantsLength && !has("content-length") && !has("transfer-encoding"))
        out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    if (!has("connection"))
        out += "Connection: close\r\n";
    out += "\r\n";
    out += body;
    return out;
}

HttpResult httpRequest(const QByteArray &method, const QString &url, const QByteArray &body,
                       const HeaderList &headers, int timeoutMs)
{
    const QUrl u(url);
    return rawHttp(u.host(), static_cast<quint16>(u.port(80)),
                   buildRequest(method, url, body, headers), timeoutMs);
}

QByteArray sha256Hex(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

QList<QByteArray> sseData(const QByteArray &body)
{
    QList<QByteArray> out;
    QList<QByteArray> data;
    QByteArray normalized = body;
    normalized.replace("\r\n", "\n");
    // A blank line ends an event; a trailing event without one still counts.
    for (const QByteArray &line : normalized.split('\n')) {
        if (line.isEmpty()) {
            if (!data.isEmpty())
                out << data.join('\n');
            data.clear();
        } else if (line.startsWith("data:")) {
            QByteArray v = line.mid(5);
            if (v.startsWith(' '))
                v.remove(0, 1);
            data << v;
        }
    }
    if (!data.isEmpty())
        out << data.join('\n');
    return out;
}

} // namespace slp::test
