// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/socket/socketcall.h"

#include "net/directwrite.h"
#include "upstream/upstreamhead.h"

#include <QPointer>
#include <QTcpSocket>

#include <cerrno>
#include <sys/socket.h>

namespace slp {

namespace {
constexpr qint64 kHighWater = 256 * 1024;       // unread body past this: stop reading the socket
constexpr qint64 kLowWater = 128 * 1024;        // ... and read again once the core is below this
constexpr qint64 kSocketReadBuffer = 64 * 1024; // what Qt may hold for us while we do not read
constexpr qsizetype kCoalesceBody = 64 * 1024;  // smaller bodies go out in the head's write
} // namespace

bool stillUsable(QTcpSocket *socket, bool tls)
{
    if (socket->state() != QAbstractSocket::ConnectedState || socket->bytesAvailable() > 0)
        return false;
    const qintptr fd = socket->socketDescriptor();
    if (fd < 0)
        return tls;
    // The FIN may be in the kernel already without the event loop having seen it.
    char c = 0;
    const ssize_t n = ::recv(int(fd), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return false;
    if (n > 0)
        return tls; // TLS records (a session ticket) are fine; plain bytes are garbage
    return errno == EAGAIN || errno == EWOULDBLOCK;
}

void discard(QTcpSocket *socket)
{
    if (SocketLink *link = SocketLink::of(socket))
        link->shadow.close(); // first: Qt's close is then the last one, as without a shadow
    socket->abort();
    socket->deleteLater();
}

SocketCall::SocketCall(IdlePool *pool, SocketEndpoint endpoint, QByteArray head, ByteChain body,
                       bool headRequest, Observer &observer)
    : UpstreamCall(observer), m_pool(pool), m_dialer(std::move(endpoint)), m_head(std::move(head)),
      m_body(std::move(body)), m_headRequest(headRequest)
{
    m_response.reset(m_headRequest);
}

void SocketCall::begin()
{
    if (QTcpSocket *reused = m_pool ? m_pool->take(m_dialer.endpoint().key) : nullptr) {
        m_reused = true;
        attach(reused);
        notePeer();
    } else {
        dial();
    }
    if (!m_finished)
        writeRequest();
}

QByteArray SocketCall::read(qint64 maxBytes)
{
    QByteArray out = m_response.read(maxBytes);
    if (m_paused && m_response.buffered() < kLowWater && !m_resumeQueued) {
        // Not from inside the core's read: reading the socket emits signals.
        m_resumeQueued = true;
        QMetaObject::invokeMethod(
            this, [this] { resume(); }, Qt::QueuedConnection);
    }
    return out;
}

void SocketCall::abort()
{
    if (m_finished)
        return; // its connection is back in the pool or closed already
    m_failure = Failure::Aborted;
    m_errorDetail = QStringLiteral("aborted");
    closeSocket(); // the upstream sees the close at once: never pooled
    finishNow();
}

void SocketCall::dial()
{
    End failed;
    std::unique_ptr<QTcpSocket> socket = m_dialer.dial(kSocketReadBuffer, &failed);
    if (!socket) // a failure here is reported from inside start() (the seam allows it)
        return fail(failed.failure, failed.detail);
    attach(socket.release()); // owned by this call (m_socket), then by the pool
}

void SocketCall::attach(QTcpSocket *socket)
{
    m_socket = socket;
    SocketLink *link = SocketLink::of(socket);
    if (!link)
        link = new SocketLink(socket, m_pool); // a Qt child of the socket
    link->call = this;
}

QTcpSocket *SocketCall::detach()
{
    QTcpSocket *socket = std::exchange(m_socket, nullptr);
    if (SocketLink *link = socket ? SocketLink::of(socket) : nullptr)
        link->call = nullptr;
    return socket;
}

void SocketCall::onConnected()
{
    notePeer();
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_socket->flush(); // not a bytesWritten handler: safe (docs/QT64.md, "flush in bytesWritten")
}

void SocketCall::onReadyRead()
{
    if (!m_paused)
        pump();
}

void SocketCall::onDisconnected()
{
    m_peerClosed = true;
    handleEof();
}

void SocketCall::writeRequest()
{
    // A reused connection takes the request straight into the kernel (writeDirect); a new
    // one gets it from Qt once connected. A small request goes as one array (one copy), so it
    // leaves in one segment even through Qt's buffer; a large one as the head and the body's
    // pieces in one gather write (a renamed 60 MB body: the client's block and the new value).
    ByteChain request(m_head);
    request.append(m_body);
    m_written += m_body.size() <= kCoalesceBody ? writeDirect(m_socket, request.joined())
                                                : writeDirect(m_socket, request);
    if (m_socket && m_socket->state() == QAbstractSocket::ConnectedState &&
        m_socket->bytesToWrite() > 0)
        m_socket->flush(); // out now, not on the next loop pass
}

void SocketCall::closeSocket()
{
    if (!m_socket)
        return;
    discard(detach());
}

void SocketCall::notePeer()
{
    if (const QString peer = m_socket ? SocketDialer::peerOf(*m_socket) : QString();
        !peer.isEmpty())
        m_peer = peer;
}

QString SocketCall::where()
{
    notePeer();
    return m_dialer.where(*m_socket);
}

bool SocketCall::mayRedial() const
{
    return m_reused && !m_redialed && m_received == 0 && m_written < m_head.size();
}

void SocketCall::redial()
{
    m_redialed = true;
    m_reused = false;
    m_peer.clear();
    closeSocket();
    m_written = 0;
    m_received = 0;
    m_peerClosed = false;
    m_response.reset(m_headRequest);
    dial();
    if (!m_finished)
        writeRequest();
}

void SocketCall::onError(QAbstractSocket::SocketError error)
{
    if (m_finished)
        return;
    if (error == QAbstractSocket::RemoteHostClosedError) {
        m_peerClosed = true; // closed or reset: the end of a close-delimited body
        handleEof();
        return;
    }
    if (mayRedial()) {
        redial();
        return;
    }
    notePeer();
    const End failed = m_dialer.failure(*m_socket, error, m_headArrived);
    fail(failed.failure, failed.detail);
}

void SocketCall::pump()
{
    QPointer<SocketCall> guard(this);
    while (m_socket && !m_finished && !m_paused) {
        const QByteArray data = m_socket->readAll(); // also re-arms Qt's read notifier
        if (data.isEmpty())
            break;
        if (!process(data) || !guard)
            return;
        if (m_response.buffered() > kHighWater)
            m_paused = true; // Qt fills its 64 KiB and then stops reading: backpressure
    }
}

void SocketCall::resume()
{
    m_resumeQueued = false;
    if (m_finished || !m_socket || !m_paused)
        return;
    m_paused = false;
    QPointer<SocketCall> guard(this);
    pump();
    if (guard && !m_finished && !m_paused && m_peerClosed)
        handleEof();
}

void SocketCall::handleEof()
{
    if (m_finished)
        return;
    if (m_socket && m_socket->bytesAvailable() > 0) {
        if (m_paused)
            return; // resume() reads the rest first
        QPointer<SocketCall> guard(this);
        pump();
        if (!guard || m_finished || m_paused)
            return;
    }
    m_response.feedEof(); // EOF ends a close-delimited body
    if (emitProgress())
        return;
    if (mayRedial()) {
        redial();
        return;
    }
    if (m_headArrived) {
        const bool reset = peerReset();
        fail(reset ? Failure::ResetBody : Failure::BrokenBody,
             where() + QStringLiteral("connection %1 by the upstream mid-body")
                           .arg(reset ? QStringLiteral("reset") : QStringLiteral("closed")));
    } else if (m_received > 0) {
        fail(Failure::Protocol,
             where() + QStringLiteral("connection closed inside the response head"));
    } else {
        fail(Failure::Closed, where() + QStringLiteral("connection closed by the upstream "
                                                       "before a response"));
    }
}

bool SocketCall::peerReset() const
{
    const SocketLink *link = m_socket ? SocketLink::of(m_socket) : nullptr;
    return link && link->shadow.peerEnd() == PeerEnd::Reset;
}

bool SocketCall::process(const QByteArray &data)
{
    m_received += data.size();
    m_response.feed(data);
    if (emitProgress())
        return false;
    if (m_response.hasError()) {
        if (m_headArrived) {
            fail(Failure::BrokenBody,
                 where() + QStringLiteral("malformed response body: ") + m_response.errorText());
        } else {
            fail(Failure::Protocol,
                 where() + QStringLiteral("malformed response head: ") + m_response.errorText());
        }
        return false;
    }
    return true;
}

bool SocketCall::emitProgress()
{
    QPointer<SocketCall> guard(this);
    UpstreamHead head;
    if (m_response.takeHead(&head)) {
        m_headArrived = true;
        dropUnfitRequestIds(head, m_dialer.endpoint().key);
        notifyHead(head);
        if (!guard || m_finished)
            return true;
    }
    if (m_response.takeBodyGrew()) {
        notifyReadable();
        if (!guard || m_finished)
            return true;
    }
    if (m_response.isComplete()) {
        succeed();
        return true;
    }
    return false;
}

void SocketCall::succeed()
{
    const bool keep = m_response.keepAlive() && !m_response.hasExtraBytes() && !m_peerClosed &&
                      m_socket && m_socket->state() == QAbstractSocket::ConnectedState &&
                      m_socket->bytesToWrite() == 0 && m_socket->bytesAvailable() == 0;
    if (keep && m_pool)
        m_pool->release(m_dialer.endpoint().key, detach());
    else
        closeSocket();
    finishNow();
}

void SocketCall::fail(Failure failure, const QString &detail)
{
    m_failure = failure;
    m_errorDetail = detail;
    closeSocket();
    finishNow();
}

void SocketCall::finishNow()
{
    m_finished = true;
    notifyFinished(); // the last thing: the observer may drop this call
}

SocketLink::SocketLink(QTcpSocket *socket, IdlePool *pool) : QObject(socket), pool(pool)
{
    connect(
        socket, &QAbstractSocket::connected, this,
        [this, socket] {
            shadow.watch(socket->socketDescriptor());
            if (call)
                call->onConnected();
        });
    connect(socket, &QIODevice::readyRead, this,
            [this, socket] { call ? call->onReadyRead() : idleEvent(socket); });
    // channelBytesWritten, unlike bytesWritten, is not swallowed when Qt nests writes.
    connect(
        socket, &QIODevice::channelBytesWritten, this,
        [this](int, qint64 n) {
            if (call)
                call->onWritten(n);
        });
    connect(
        socket, &QAbstractSocket::errorOccurred, this,
        [this, socket](QAbstractSocket::SocketError error) {
            call ? call->onError(error) : idleEvent(socket);
        });
    connect(socket, &QAbstractSocket::disconnected, this,
            [this, socket] { call ? call->onDisconnected() : idleEvent(socket); });
}

SocketLink *SocketLink::of(QTcpSocket *socket)
{
    // Not findChild<SocketLink *>: SocketLink has no Q_OBJECT, so that would take any child,
    // such as the socket engine a socket made from a descriptor already has.
    for (QObject *child : socket->children())
        if (auto *link = dynamic_cast<SocketLink *>(child))
            return link;
    return nullptr;
}

void SocketLink::idleEvent(QTcpSocket *socket)
{
    if (pool)
        pool->drop(socket); // anything an idle connection does makes it useless
}

} // namespace slp
