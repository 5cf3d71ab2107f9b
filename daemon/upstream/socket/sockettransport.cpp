#include "upstream/socket/sockettransport.h"

#include "net/directwrite.h"

#include <QNetworkProxy>
#include <QPointer>
#include <QSslSocket>
#include <QTcpSocket>

#include <http_parser.h>

#include <cerrno>
#include <deque>
#include <mutex>
#include <sys/socket.h>

namespace slp {

namespace {
constexpr uint32_t kMaxHeadBytes = 64 * 1024;   // a larger response head is a 502
constexpr qint64 kHighWater = 256 * 1024;       // unread body past this: stop reading the socket
constexpr qint64 kLowWater = 128 * 1024;        // ... and read again once the core is below this
constexpr qint64 kSocketReadBuffer = 64 * 1024; // what Qt may hold for us while we do not read
constexpr qsizetype kCoalesceBody = 64 * 1024;  // smaller bodies go out in the head's write
constexpr std::chrono::milliseconds kSweepEvery{5000};

using Endpoint = SocketEndpoint;

Endpoint endpointFor(const QUrl &url, const QString &key)
{
    Endpoint e;
    e.tls = url.scheme().compare(QLatin1String("https"), Qt::CaseInsensitive) == 0;
    const quint16 defaultPort = e.tls ? 443 : 80;
    e.host = url.host(QUrl::EncodeUnicode);
    e.port = quint16(url.port(defaultPort));
    QByteArray host = url.host(QUrl::FullyEncoded).toLatin1();
    if (host.contains(':')) {
        host = '[' + host + ']';
    }
    e.hostHeader = host;
    if (e.port != defaultPort) {
        e.hostHeader += ':' + QByteArray::number(e.port);
    }
    e.key = key;
    return e;
}

bool isNamed(const QByteArray &name, QByteArrayView want)
{
    return name.compare(want, Qt::CaseInsensitive) == 0;
}

// The request head exactly as the core prepared it: request line with the raw target, Host
// from the origin, the prepared headers in order (repeats apart), Content-Length, nothing else.
QByteArray requestHead(const UpstreamRequest &request, const Endpoint &endpoint)
{
    const QByteArray target = request.target.isEmpty() ? QByteArray("/") : request.target;
    qsizetype size = request.method.size() + target.size() + endpoint.hostHeader.size() + 64;
    for (const auto &[name, value] : request.headers) {
        size += name.size() + value.size() + 4;
    }
    QByteArray head;
    head.reserve(size);
    head += request.method;
    head += ' ';
    head += target;
    head += " HTTP/1.1\r\nHost: ";
    head += endpoint.hostHeader;
    head += "\r\n";
    for (const auto &[name, value] : request.headers) {
        // Framing and Host are the transport's; the core never passes them, but a stray one
        // would make the upstream read a different request.
        if (isNamed(name, "host") || isNamed(name, "content-length") ||
            isNamed(name, "transfer-encoding")) {
            continue;
        }
        head += name;
        head += ": ";
        head += value;
        head += "\r\n";
    }
    const bool bodyMethod =
        request.method == "POST" || request.method == "PUT" || request.method == "PATCH";
    if (bodyMethod || !request.body.isEmpty()) {
        head += "Content-Length: ";
        head += QByteArray::number(request.body.size());
        head += "\r\n";
    }
    head += "\r\n";
    return head;
}

// False when the upstream closed the idle connection (or sent something unasked for).
bool stillUsable(QTcpSocket *socket, bool tls)
{
    if (socket->state() != QAbstractSocket::ConnectedState || socket->bytesAvailable() > 0) {
        return false;
    }
    const qintptr fd = socket->socketDescriptor();
    if (fd < 0) {
        return tls;
    }
    // The FIN may be in the kernel already without the event loop having seen it.
    char c = 0;
    const ssize_t n = ::recv(int(fd), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) {
        return false;
    }
    if (n > 0) {
        return tls; // TLS records (a session ticket) are fine; plain bytes are garbage
    }
    return errno == EAGAIN || errno == EWOULDBLOCK;
}

void discard(QTcpSocket *socket)
{
    socket->abort();
    socket->deleteLater();
}

void setHeadLimitOnce()
{
    static std::once_flag once;
    // Process-wide in http-parser 2.9; SLP has no other user of the library.
    std::call_once(once, [] { http_parser_set_max_header_size(kMaxHeadBytes); });
}
} // namespace

class SocketCall;

// Wired to its socket once, for the socket's whole life: it hands the socket's signals to the
// call using it, or, while the socket idles in the pool, tells the pool to drop it. Connecting
// and disconnecting five signals per request cost more than parsing the response.
class SocketLink : public QObject
{
public:
    SocketLink(QTcpSocket *socket, SocketTransport *transport);
    static SocketLink *of(QTcpSocket *socket)
    {
        return socket->findChild<SocketLink *>(QString(), Qt::FindDirectChildrenOnly);
    }

    SocketCall *call = nullptr; // the call using the socket; null while pooled or discarded
    QPointer<SocketTransport> transport;

private:
    void idleEvent(QTcpSocket *socket)
    {
        if (transport) {
            transport->dropIdle(socket); // anything an idle connection does makes it useless
        }
    }
};

class SocketCall : public UpstreamCall
{
public:
    SocketCall(SocketTransport *transport, Endpoint endpoint, QByteArray head, QByteArray body,
               bool headRequest)
        : m_transport(transport), m_endpoint(std::move(endpoint)), m_head(std::move(head)),
          m_body(std::move(body)), m_headRequest(headRequest)
    {
        resetParser();
    }

    ~SocketCall() override { closeSocket(); }

    void begin(QTcpSocket *reused)
    {
        m_inStart = true;
        if (reused) {
            m_reused = true;
            attach(reused);
        } else {
            dial();
        }
        writeRequest();
        m_inStart = false;
    }

    qint64 bytesAvailable() const override { return m_buffered; }
    bool isRunning() const override { return !m_finished; }

    QByteArray read(qint64 maxBytes) override
    {
        QByteArray out;
        while (!m_chunks.empty() && out.size() < maxBytes) {
            QByteArray &front = m_chunks.front();
            const qsizetype frontSize = front.size();
            const qsizetype take = qsizetype(
                std::min<qint64>(frontSize - m_chunkOffset, maxBytes - qint64(out.size())));
            if (out.isEmpty() && m_chunkOffset == 0 && take == frontSize) {
                out = std::move(front); // no copy for a whole piece
            } else {
                out.append(front.constData() + m_chunkOffset, take);
            }
            m_chunkOffset += take;
            if (m_chunkOffset >= frontSize) {
                m_chunks.pop_front();
                m_chunkOffset = 0;
            }
        }
        m_buffered -= out.size();
        if (m_paused && m_buffered < kLowWater && !m_resumeQueued) {
            // Not from inside the core's read: reading the socket emits signals.
            m_resumeQueued = true;
            QMetaObject::invokeMethod(
                this, [this] { resume(); }, Qt::QueuedConnection);
        }
        return out;
    }

    void abort() override
    {
        if (m_finished) {
            return; // its connection is back in the pool or closed already
        }
        m_failure = Failure::Aborted;
        m_errorDetail = QStringLiteral("aborted");
        closeSocket(); // the upstream sees the close at once: never pooled
        finishNow();
    }

private:
    // --- connection ---------------------------------------------------------------------

    void dial()
    {
        QTcpSocket *socket = m_endpoint.tls ? new QSslSocket : new QTcpSocket;
        socket->setProxy(QNetworkProxy::NoProxy);
        socket->setReadBufferSize(kSocketReadBuffer);
        attach(socket);
        if (m_endpoint.tls) {
            static_cast<QSslSocket *>(socket)->connectToHostEncrypted(m_endpoint.host,
                                                                      m_endpoint.port);
        } else {
            socket->connectToHost(m_endpoint.host, m_endpoint.port);
        }
    }

    void attach(QTcpSocket *socket)
    {
        m_socket = socket;
        SocketLink *link = SocketLink::of(socket);
        if (!link) {
            link = new SocketLink(socket, m_transport); // a Qt child of the socket
        }
        link->call = this;
    }

    // Hands the socket back: its signals stop reaching this call.
    QTcpSocket *detach()
    {
        QTcpSocket *socket = std::exchange(m_socket, nullptr);
        if (SocketLink *link = socket ? SocketLink::of(socket) : nullptr) {
            link->call = nullptr;
        }
        return socket;
    }

    // --- the socket's events, from its SocketLink ------------------------------------------
    friend class SocketLink;
    void onConnected()
    {
        m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        m_socket->flush(); // not a bytesWritten handler: safe (QT64-NOTES.md)
    }
    void onReadyRead()
    {
        if (!m_paused) {
            pump();
        }
    }
    void onWritten(qint64 n) { m_written += n; }
    void onDisconnected()
    {
        m_peerClosed = true;
        handleEof();
    }

    void writeRequest()
    {
        // A reused connection takes the request straight into the kernel (writeDirect); a new
        // one gets it from Qt once connected.
        if (m_body.size() <= kCoalesceBody) {
            m_written += writeDirect(m_socket, m_head + m_body); // one segment, usually
        } else {
            m_written += writeDirect(m_socket, m_head);
            m_written += writeDirect(m_socket, m_body);
        }
        if (m_socket && m_socket->state() == QAbstractSocket::ConnectedState &&
            m_socket->bytesToWrite() > 0) {
            m_socket->flush(); // out now, not on the next loop pass
        }
    }

    void closeSocket()
    {
        if (!m_socket) {
            return;
        }
        discard(detach());
    }

    QString where() const
    {
        if (m_socket && !m_socket->peerAddress().isNull()) {
            const QHostAddress a = m_socket->peerAddress();
            const QString ip = a.protocol() == QAbstractSocket::IPv6Protocol
                                   ? QLatin1Char('[') + a.toString() + QLatin1Char(']')
                                   : a.toString();
            return ip + QLatin1Char(':') + QString::number(m_socket->peerPort());
        }
        return m_endpoint.host + QLatin1Char(':') + QString::number(m_endpoint.port);
    }

    // A reused connection that died before the upstream can have seen a whole request head:
    // nothing of the request can have been processed, so it may go out on a fresh one, once.
    bool mayRedial() const
    {
        return m_reused && !m_redialed && m_received == 0 && m_written < m_head.size();
    }

    void redial()
    {
        m_redialed = true;
        m_reused = false;
        closeSocket();
        m_written = 0;
        m_received = 0;
        m_peerClosed = false;
        resetParser();
        dial();
        writeRequest();
    }

    void onError(QAbstractSocket::SocketError error)
    {
        if (m_finished) {
            return;
        }
        if (error == QAbstractSocket::RemoteHostClosedError) {
            m_peerClosed = true; // closed or reset: the end of a close-delimited body
            handleEof();
            return;
        }
        if (mayRedial()) {
            redial();
            return;
        }
        Failure failure = Failure::Other;
        if (m_headArrived) {
            failure = Failure::BrokenBody;
        } else if (error == QAbstractSocket::ConnectionRefusedError) {
            failure = Failure::Refused;
        } else if (error == QAbstractSocket::HostNotFoundError) {
            failure = Failure::NameLookup;
        }
        const QString verb = error == QAbstractSocket::ConnectionRefusedError ||
                                     error == QAbstractSocket::HostNotFoundError
                                 ? QStringLiteral("connect to ")
                                 : QString();
        fail(failure, verb + where() + QStringLiteral(": ") + m_socket->errorString());
    }

    // --- reading ------------------------------------------------------------------------

    void pump()
    {
        QPointer<SocketCall> guard(this);
        while (m_socket && !m_finished && !m_paused) {
            const QByteArray data = m_socket->readAll(); // also re-arms Qt's read notifier
            if (data.isEmpty()) {
                break;
            }
            if (!process(data) || !guard) {
                return;
            }
            if (m_buffered > kHighWater) {
                m_paused = true; // Qt fills its 64 KiB and then stops reading: backpressure
            }
        }
    }

    void resume()
    {
        m_resumeQueued = false;
        if (m_finished || !m_socket || !m_paused) {
            return;
        }
        m_paused = false;
        QPointer<SocketCall> guard(this);
        pump();
        if (guard && !m_finished && !m_paused && m_peerClosed) {
            handleEof();
        }
    }

    void handleEof()
    {
        if (m_finished) {
            return;
        }
        if (m_socket && m_socket->bytesAvailable() > 0) {
            if (m_paused) {
                return; // resume() reads the rest first
            }
            QPointer<SocketCall> guard(this);
            pump();
            if (!guard || m_finished || m_paused) {
                return;
            }
        }
        http_parser_execute(&m_parser, &settings(), nullptr, 0); // EOF ends a close-delimited body
        if (emitProgress()) {
            return;
        }
        if (mayRedial()) {
            redial();
            return;
        }
        if (m_headArrived) {
            fail(Failure::BrokenBody,
                 where() + QStringLiteral(": connection closed by the upstream mid-body"));
        } else if (m_received > 0) {
            fail(Failure::Protocol,
                 where() + QStringLiteral(": connection closed inside the response head"));
        } else {
            fail(Failure::Closed, where() + QStringLiteral(": connection closed by the upstream "
                                                           "before a response"));
        }
    }

    // Parses one piece; false when the call finished (or was deleted) meanwhile.
    bool process(const QByteArray &data)
    {
        m_received += data.size();
        m_feeding = &data;
        const size_t parsed =
            http_parser_execute(&m_parser, &settings(), data.constData(), size_t(data.size()));
        m_feeding = nullptr;
        if (m_messageComplete && parsed < size_t(data.size())) {
            m_extraBytes = true; // bytes after the response: the connection is spent
        }
        if (emitProgress()) {
            return false;
        }
        const auto error = HTTP_PARSER_ERRNO(&m_parser);
        if (error != HPE_OK || m_parser.upgrade) {
            const QString what =
                QString::fromLatin1(m_parser.upgrade ? "an unasked-for protocol upgrade"
                                                     : http_errno_description(http_errno(error)));
            if (m_headArrived) {
                fail(Failure::BrokenBody,
                     where() + QStringLiteral(": malformed response body: ") + what);
            } else {
                fail(Failure::Protocol,
                     where() + QStringLiteral(": malformed response head: ") +
                         (error == HPE_HEADER_OVERFLOW ? QStringLiteral("larger than 64 KiB")
                                                       : what));
            }
            return false;
        }
        return true;
    }

    // Emits what the parser produced; true when the call is finished (or gone).
    bool emitProgress()
    {
        QPointer<SocketCall> guard(this);
        if (m_headPending) {
            m_headPending = false;
            m_headArrived = true;
            Q_EMIT headReceived(m_pendingHead);
            if (!guard || m_finished) {
                return true;
            }
        }
        if (std::exchange(m_bodyGrew, false)) {
            Q_EMIT readyRead();
            if (!guard || m_finished) {
                return true;
            }
        }
        if (m_messageComplete) {
            succeed();
            return true;
        }
        return false;
    }

    void succeed()
    {
        const bool keep = m_keepAlive && !m_extraBytes && !m_peerClosed && m_socket &&
                          m_socket->state() == QAbstractSocket::ConnectedState &&
                          m_socket->bytesToWrite() == 0 && m_socket->bytesAvailable() == 0;
        if (keep && m_transport) {
            m_transport->release(m_endpoint.key, detach());
        } else {
            closeSocket();
        }
        finishNow();
    }

    void fail(Failure failure, const QString &detail)
    {
        m_failure = failure;
        m_errorDetail = detail;
        closeSocket();
        finishNow();
    }

    void finishNow()
    {
        m_finished = true;
        if (m_inStart) {
            // Nobody listens yet: the core connects after start() returns.
            QMetaObject::invokeMethod(
                this, [this] { Q_EMIT finished(); }, Qt::QueuedConnection);
            return;
        }
        Q_EMIT finished();
    }

    // --- http-parser --------------------------------------------------------------------

    void resetParser()
    {
        http_parser_init(&m_parser, HTTP_RESPONSE);
        m_parser.data = this;
        m_pendingHead = UpstreamHead();
        m_field.clear();
        m_value.clear();
        m_inValue = false;
        m_interim = false;
        m_headPending = false;
        m_messageComplete = false;
        m_extraBytes = false;
    }

    static SocketCall *self(http_parser *p) { return static_cast<SocketCall *>(p->data); }

    void endHeader()
    {
        if (!m_field.isEmpty()) {
            m_pendingHead.headers.append({std::move(m_field), std::move(m_value)});
        }
        m_field = QByteArray(); // moved from: null, the next piece allocates exactly
        m_value = QByteArray();
        m_inValue = false;
    }

    // A header name or value usually comes in one piece: one exact allocation, no growth.
    static void appendPiece(QByteArray &to, const char *at, size_t n)
    {
        if (to.isNull()) {
            to = QByteArray(at, qsizetype(n));
        } else {
            to.append(at, qsizetype(n));
        }
    }

    static const http_parser_settings &settings()
    {
        static const http_parser_settings table = [] {
            http_parser_settings s{};
            s.on_message_begin = [](http_parser *p) {
                SocketCall *c = self(p);
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
                SocketCall *c = self(p);
                if (c->m_inValue) {
                    c->endHeader();
                }
                appendPiece(c->m_field, at, n);
                return 0;
            };
            s.on_header_value = [](http_parser *p, const char *at, size_t n) {
                SocketCall *c = self(p);
                c->m_inValue = true;
                appendPiece(c->m_value, at, n);
                return 0;
            };
            s.on_headers_complete = [](http_parser *p) {
                SocketCall *c = self(p);
                c->endHeader();
                const int status = int(p->status_code);
                if (status == 101) {
                    return -1; // SLP never asks to switch protocols
                }
                if (status >= 100 && status < 200) {
                    c->m_interim = true; // 100 Continue, 103 Early Hints: skipped
                    return 0;
                }
                c->m_pendingHead.status = status;
                if ((p->flags & F_CONTENTLENGTH) && !(p->flags & F_CHUNKED)) {
                    c->m_pendingHead.contentLength = qint64(p->content_length);
                }
                c->m_headPending = true;
                return c->m_headRequest ? 1 : 0; // HEAD: a length but no body
            };
            s.on_body = [](http_parser *p, const char *at, size_t n) {
                SocketCall *c = self(p);
                const QByteArray *piece = c->m_feeding;
                if (piece && at == piece->constData() && qsizetype(n) == piece->size()) {
                    c->m_chunks.push_back(*piece); // shared, not copied
                } else {
                    c->m_chunks.emplace_back(at, qsizetype(n));
                }
                c->m_buffered += qint64(n);
                c->m_bodyGrew = true;
                return 0;
            };
            s.on_message_complete = [](http_parser *p) {
                SocketCall *c = self(p);
                if (c->m_interim) {
                    c->m_interim = false;
                    return 0;
                }
                c->m_keepAlive = http_should_keep_alive(p) != 0;
                c->m_messageComplete = true;
                http_parser_pause(p, 1); // what follows in the same read is not a response
                return 0;
            };
            return s;
        }();
        return table;
    }

    QPointer<SocketTransport> m_transport;
    Endpoint m_endpoint;
    QByteArray m_head;
    QByteArray m_body;
    bool m_headRequest;

    QTcpSocket *m_socket = nullptr; // ours while the call runs; the pool's once released
    bool m_reused = false;
    bool m_redialed = false;
    bool m_inStart = false;
    qint64 m_written = 0;  // request bytes the kernel took on this connection
    qint64 m_received = 0; // response bytes read on this connection

    http_parser m_parser{};
    const QByteArray *m_feeding = nullptr; // the piece being parsed
    UpstreamHead m_pendingHead;
    QByteArray m_field;
    QByteArray m_value;
    bool m_inValue = false;
    bool m_interim = false;
    bool m_headPending = false;
    bool m_messageComplete = false;
    bool m_extraBytes = false;
    bool m_keepAlive = false;

    std::deque<QByteArray> m_chunks; // body bytes not yet read by the core
    qsizetype m_chunkOffset = 0;
    qint64 m_buffered = 0;
    bool m_bodyGrew = false;
    bool m_paused = false;
    bool m_resumeQueued = false;
    bool m_peerClosed = false;
    bool m_finished = false;
};

SocketLink::SocketLink(QTcpSocket *socket, SocketTransport *transport)
    : QObject(socket), transport(transport)
{
    connect(socket, &QAbstractSocket::connected, this, [this] {
        if (call) {
            call->onConnected();
        }
    });
    connect(socket, &QIODevice::readyRead, this,
            [this, socket] { call ? call->onReadyRead() : idleEvent(socket); });
    // channelBytesWritten, unlike bytesWritten, is not swallowed when Qt nests writes.
    connect(socket, &QIODevice::channelBytesWritten, this, [this](int, qint64 n) {
        if (call) {
            call->onWritten(n);
        }
    });
    connect(socket, &QAbstractSocket::errorOccurred, this,
            [this, socket](QAbstractSocket::SocketError error) {
                call ? call->onError(error) : idleEvent(socket);
            });
    connect(socket, &QAbstractSocket::disconnected, this,
            [this, socket] { call ? call->onDisconnected() : idleEvent(socket); });
}

SocketTransport::SocketTransport(int maxIdlePerOrigin, QObject *parent)
    : QObject(parent), m_maxIdlePerOrigin(std::max(1, maxIdlePerOrigin))
{
    setHeadLimitOnce();
    m_clock.start();
    m_sweep.setInterval(kSweepEvery);
    connect(&m_sweep, &QTimer::timeout, this, &SocketTransport::sweep);
}

SocketTransport::~SocketTransport()
{
    for (auto &list : m_idle) {
        for (const Idle &idle : list) {
            if (SocketLink *link = SocketLink::of(idle.socket)) {
                link->transport = nullptr; // no dropIdle() while this is being destroyed
            }
            idle.socket->abort();
            delete idle.socket;
        }
    }
}

void SocketTransport::setIdleTimeout(std::chrono::milliseconds timeout)
{
    m_idleTimeout = timeout;
    m_sweep.setInterval(std::min(kSweepEvery, std::max(timeout / 2, std::chrono::milliseconds(1))));
}

int SocketTransport::idleConnectionCount() const
{
    return int(m_idleKey.size());
}

std::unique_ptr<UpstreamCall> SocketTransport::start(const UpstreamRequest &request)
{
    const Endpoint &endpoint = endpointOf(request);
    QByteArray head = requestHead(request, endpoint);
    auto call = std::make_unique<SocketCall>(this, endpoint, std::move(head), request.body,
                                             request.method == "HEAD");
    call->begin(takeIdle(endpoint.key));
    return call;
}

const SocketEndpoint &SocketTransport::endpointOf(const UpstreamRequest &request)
{
    auto it = m_endpoints.find(request.origin);
    if (it == m_endpoints.end()) {
        it = m_endpoints.insert(request.origin, endpointFor(request.originUrl, request.origin));
    }
    return *it;
}

QTcpSocket *SocketTransport::takeIdle(const QString &key)
{
    const auto it = m_idle.find(key);
    if (it == m_idle.end()) {
        return nullptr;
    }
    const bool tls = key.startsWith(QLatin1String("https:"));
    const qint64 now = m_clock.elapsed();
    while (!it->isEmpty()) {
        const Idle idle = it->takeLast(); // LIFO: the warmest connection
        m_idleKey.remove(idle.socket);
        if (now - idle.since < m_idleTimeout.count() && stillUsable(idle.socket, tls)) {
            idle.socket->setParent(nullptr);
            return idle.socket;
        }
        discard(idle.socket);
    }
    return nullptr;
}

void SocketTransport::release(const QString &key, QTcpSocket *socket)
{
    QList<Idle> &list = m_idle[key];
    if (list.size() >= m_maxIdlePerOrigin) {
        discard(socket);
        return;
    }
    socket->setParent(this); // its SocketLink drops it on data, close or error (dropIdle)
    list.append(Idle{socket, m_clock.elapsed()});
    m_idleKey.insert(socket, key);
    if (!m_sweep.isActive()) {
        m_sweep.start();
    }
}

void SocketTransport::dropIdle(QTcpSocket *socket)
{
    const auto keyIt = m_idleKey.find(socket);
    if (keyIt == m_idleKey.end()) {
        return;
    }
    QList<Idle> &list = m_idle[keyIt.value()];
    m_idleKey.erase(keyIt);
    list.removeIf([socket](const Idle &idle) { return idle.socket == socket; });
    discard(socket);
}

void SocketTransport::sweep()
{
    const qint64 now = m_clock.elapsed();
    for (auto it = m_idle.begin(); it != m_idle.end();) {
        QList<Idle> &list = it.value();
        // Oldest first: expire from the front.
        while (!list.isEmpty() && now - list.first().since >= m_idleTimeout.count()) {
            const Idle idle = list.takeFirst();
            m_idleKey.remove(idle.socket);
            discard(idle.socket);
        }
        it = list.isEmpty() ? m_idle.erase(it) : std::next(it);
    }
    if (m_idle.isEmpty()) {
        m_sweep.stop();
    }
}

} // namespace slp
