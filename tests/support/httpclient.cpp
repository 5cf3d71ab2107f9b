// SPDX-License-Identifier: GPL-3.0-or-later
#include "httpclient.h"

#include "wire/parser.h"

#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QTcpSocket>
#include <QTimer>
#include <QUrl>

#include <utility>

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

} // namespace

QByteArray HttpResult::header(QByteArrayView name) const
{
    return wire::headerValue(headers, name);
}

QList<QByteArray> HttpResult::headerValues(QByteArrayView name) const
{
    return wire::headerValues(headers, name);
}

bool HttpResult::hasHeader(QByteArrayView name) const
{
    return wire::hasHeader(headers, name);
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
    wire::Parser parser(wire::Parser::Kind::Response);
    parser.expectHeadResponse(headRequest);
    qint64 ms = 0;          // arrival of the piece being parsed
    bool timedRead = false; // that piece's arrival is in chunkArrivalMs (bodies not chunked)
    bool done = false;
    parser.onHead = [&](const wire::Head &h) {
        if (h.interim()) {
            r.interimStatuses << h.status;
            return;
        }
        r.status = h.status;
        r.version = h.version;
        r.reason = h.reason;
        r.headers = h.headers;
        r.headMs = ms;
    };
    parser.onBody = [&](QByteArrayView piece) {
        r.body.append(piece);
        if (!parser.head().chunked && !std::exchange(timedRead, true))
            r.chunkArrivalMs << ms;
    };
    parser.onChunk = [&](qint64) { r.chunkArrivalMs << ms; };
    parser.onMessage = [&] { done = true; };
    auto result = [&](QString error) {
        r.error = std::move(error);
        r.complete = done && r.error.isEmpty();
        r.elapsedMs = m_clock.elapsed();
        return r;
    };

    const QDeadlineTimer deadline(std::max(0, timeoutMs));
    for (;;) {
        while (!m_pending.isEmpty()) {
            const auto [data, at] = m_pending.takeFirst();
            ms = at;
            timedRead = false;
            const qsizetype used = parser.feed(data);
            r.raw += data.left(used);
            if (parser.failed()) {
                r.raw += data.mid(used);
                return result(QStringLiteral("malformed response: %1").arg(parser.error()));
            }
            if (done) {
                if (used < data.size())
                    m_pending.prepend({data.mid(used), at}); // the next pipelined response
                return result({});
            }
        }
        if (m_closed) {
            r.peerClosed = true;
            parser.finish(); // the close ends a close-delimited body
            if (done)
                return result({});
            return result(parser.headDone()
                              ? QStringLiteral("connection closed before the end of the body")
                              : QStringLiteral("connection closed before the response head"));
        }
        if (deadline.hasExpired())
            return result(QStringLiteral("timed out after %1 ms").arg(timeoutMs));
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
    HeaderList all;
    if (!wire::hasHeader(headers, "host"))
        all.append({"Host", u.host().toLatin1() + (u.port() > 0 ? ':' + QByteArray::number(u.port())
                                                                : QByteArray())});
    all += headers;
    const bool wantsLength =
        !body.isEmpty() || method == "POST" || method == "PUT" || method == "PATCH";
    if (wantsLength && !wire::hasHeader(headers, "content-length") &&
        !wire::hasHeader(headers, "transfer-encoding"))
        all.append({"Content-Length", QByteArray::number(body.size())});
    if (!wire::hasHeader(headers, "connection"))
        all.append({QByteArray("Connection"), QByteArray("close")});
    return wire::requestHead(method, target, all) + body;
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
