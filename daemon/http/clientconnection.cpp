// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/clientconnection.h"

#include "net/directwrite.h"

#include <QTcpSocket>

namespace slp {

ClientConnection::ClientConnection(QTcpSocket *socket, const ConnectionLimits &limits)
    : QObject(socket), m_socket(socket), m_limits(limits), m_framer(limits.head)
{
    m_headerTimer.setSingleShot(true);
    m_idleTimer.setSingleShot(true);
    m_bodyTimer.setSingleShot(true);
    connect(&m_headerTimer, &QTimer::timeout, this, &ClientConnection::onHeaderTimeout);
    connect(&m_bodyTimer, &QTimer::timeout, this, &ClientConnection::onBodyTimeout);
    connect(&m_idleTimer, &QTimer::timeout, this, [this] {
        if (m_socket) {
            m_socket->disconnectFromHost();
        }
    });
    // Connected before QtHttpServer's own handler (the listener attaches this first), so every
    // byte is checked here before Qt's lenient parser buffers it.
    connect(socket, &QTcpSocket::readyRead, this, &ClientConnection::onReadyRead);
    connect(socket, &QTcpSocket::bytesWritten, this, &ClientConnection::onBytesWritten);
    connect(socket, &QTcpSocket::disconnected, this, &ClientConnection::onDisconnected);
    // A connection that never sends a byte gets the header timeout, not the idle timeout.
    m_headerTimer.start(m_limits.headerTimeout);
}

ClientConnection::~ClientConnection() = default;

ClientConnection *ClientConnection::of(QTcpSocket *socket)
{
    return socket ? socket->findChild<ClientConnection *>(QString(), Qt::FindDirectChildrenOnly)
                  : nullptr;
}

void ClientConnection::onReadyRead()
{
    if (!m_socket) {
        return;
    }
    m_idleTimer.stop();
    if (m_rejected || m_closing) {
        m_socket->readAll(); // nothing more is read from a connection being closed
        return;
    }
    const qint64 available = m_socket->bytesAvailable();
    if (available <= 0) {
        return;
    }
    // QtHttpServer 6.4 reads inside a QIODevice transaction that stays open until a request is
    // complete: with no transaction open, the unread bytes start a new request; with one open,
    // they are new bytes of the request under way.
    const bool continuing = m_socket->isTransactionStarted();
    if (!continuing) {
        m_framer.reset();
        m_continueSent = false;
    }
    QByteArray body; // the bytes of this read that belong to the current request's body
    if (m_framer.inHead()) {
        // Only the head is parsed from here: at most its limit is copied, however much the
        // read holds.
        qsizetype headBytes = 0;
        const auto verdict = m_framer.feedHead(
            m_socket->peek(std::min<qint64>(available, m_framer.headRoom())), &headBytes);
        if (verdict == RequestFramer::Verdict::Rejected) {
            rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
            return;
        }
        if (verdict == RequestFramer::Verdict::NeedMore) {
            if (!m_headerTimer.isActive()) {
                m_headerTimer.start(m_limits.headerTimeout); // from the head's first byte
            }
            return;
        }
        m_headerTimer.stop();
        if (m_framer.wantsBodyBytes()) {
            // Every body byte of this read, however the read was split from the head.
            body = m_socket->peek(available).mid(headBytes);
        }
        // QtHttpServer ignores Expect: clients such as curl would wait a second before the body.
        const RequestHead &head = m_framer.head();
        const bool hasBody = head.chunked || head.contentLength > 0;
        if (head.expectContinue && hasBody && !m_continueSent && available == headBytes) {
            m_continueSent = true;
            // Queued: it must never land inside an earlier response still being written.
            openWriter({})->writeContinue();
        }
        // The body's deadline runs from the end of the head, not from each read: a trickle
        // cannot hold the connection forever.
        m_bodyTimer.start(m_limits.idleTimeout);
    } else if (continuing && m_framer.wantsBodyBytes()) {
        body = m_socket->peek(available);
    }
    if (!body.isEmpty() && m_framer.feedBody(body) == RequestFramer::Verdict::Rejected) {
        rejectWith(m_framer.errorStatus(), m_framer.errorMessage());
    }
}

RequestHead ClientConnection::takeHead()
{
    if (m_framer.inHead()) {
        return {};
    }
    m_bodyTimer.stop();
    RequestHead head = m_framer.takeHead();
    m_framer.reset();
    return head;
}

ResponseWriter *ClientConnection::openWriter(const ResponseContext &context)
{
    ResponseContext effective = context;
    // Draining: answered, then closed (the response says Connection: close).
    effective.keepAlive = context.keepAlive && !m_shuttingDown;
    auto *writer = new ResponseWriter(this, effective); // Qt child of this connection
    m_queue.append(writer);
    m_idleTimer.stop();
    return writer;
}

void ClientConnection::dispatch(InboundRequest request, ResponseWriter *writer,
                                RequestHandler &handler)
{
    if (!writer->m_context.keepAlive) {
        m_closeQueued = true;
    }
    if (m_waiting.isEmpty() && isHeadOfQueue(writer)) {
        handler.handle(std::move(request), writer);
        return;
    }
    if (m_waiting.size() >= kMaxWaiting) {
        // Bounded: each held request keeps its body in memory.
        writer->setKeepAlive(false);
        m_closeQueued = true;
        writer->respondError(503, QStringLiteral("too many pipelined requests on one connection"));
        return;
    }
    m_waiting.append({writer, std::move(request), &handler});
}

void ClientConnection::dispatchWaiting()
{
    while (!m_waiting.isEmpty()) {
        Waiting &next = m_waiting.first();
        if (!next.writer) {
            m_waiting.removeFirst(); // its client left
            continue;
        }
        if (!isHeadOfQueue(next.writer)) {
            return;
        }
        Waiting turn = m_waiting.takeFirst();
        turn.handler->handle(std::move(turn.request), turn.writer);
        return; // the handler may have finished it: pump() comes back here
    }
}

bool ClientConnection::isHeadOfQueue(const ResponseWriter *writer) const
{
    return m_socket && !m_queue.isEmpty() && m_queue.first() == writer;
}

bool ClientConnection::isBackedUp() const
{
    return !m_socket || m_socket->bytesToWrite() >= kHighWater;
}

void ClientConnection::beginShutdown()
{
    m_shuttingDown = true;
    if (!m_socket || m_closing) {
        return;
    }
    if (m_queue.isEmpty() && m_framer.inHead()) {
        // Idle (between requests, or in a head that has not completed): nothing is owed.
        m_closing = true;
        m_socket->disconnectFromHost();
        return;
    }
    // Busy: close after the last response already owed, even if its head went out saying
    // keep-alive (closing after a complete response is always allowed).
    for (const auto &writer : std::as_const(m_queue)) {
        if (writer) {
            writer->setKeepAlive(false);
        }
    }
}

void ClientConnection::rejectWith(int status, const QByteArray &message)
{
    Q_EMIT requestRejected(status);
    m_rejected = true;
    m_headerTimer.stop();
    m_bodyTimer.stop();
    if (m_socket) {
        m_socket->readAll();
    }
    ResponseContext context;
    context.keepAlive = false;
    openWriter(context)->respondError(status, QString::fromLatin1(message));
}

void ClientConnection::onHeaderTimeout()
{
    if (!m_framer.inHead() || m_rejected) {
        return;
    }
    rejectWith(408, "request head not received in time");
}

void ClientConnection::onBodyTimeout()
{
    if (m_framer.inHead() || m_rejected || m_closing) {
        return;
    }
    rejectWith(408, "request body not received in time");
}

void ClientConnection::onBytesWritten()
{
    if (m_flushing) {
        return; // our own flushNow(): the writer checks isWritable() itself
    }
    if (!m_socket || m_queue.isEmpty()) {
        armTimers();
        return;
    }
    if (m_socket->bytesToWrite() < kHighWater) {
        if (ResponseWriter *head = m_queue.first()) {
            const QPointer<ClientConnection> guard(this);
            m_inBytesWritten = true;
            Q_EMIT head->writable();
            if (guard) {
                m_inBytesWritten = false;
            }
        }
    }
}

void ClientConnection::send(const QByteArray &bytes)
{
    if (writeDirect(m_socket, bytes) < bytes.size()) {
        flushNow(); // Qt holds the rest
    }
}

void ClientConnection::flushNow()
{
    // Left to Qt, a write enables the socket's write notifier and goes out on the next loop
    // pass: two eventfd wake-ups, two more polls and a read per SSE event (strace). Writing
    // now saves them. Never inside bytesWritten: flushing there drains the socket without a
    // further bytesWritten, and a backpressured relay would never wake up (docs/QT64.md, "flush in
    // bytesWritten").
    if (m_inBytesWritten || m_flushing || !m_socket) {
        return;
    }
    m_flushing = true;
    const QPointer<ClientConnection> guard(this);
    m_socket->flush();
    if (guard) {
        m_flushing = false;
    }
}

void ClientConnection::pump()
{
    while (!m_queue.isEmpty() && m_socket) {
        ResponseWriter *head = m_queue.first();
        if (!head) {
            m_queue.removeFirst();
            continue;
        }
        if (!head->m_held.isEmpty()) {
            send(head->m_held);
            head->m_held.clear();
        }
        if (!head->isFinished()) {
            if (!m_waiting.isEmpty() && m_waiting.first().writer == head) {
                dispatchWaiting(); // its turn: the one before it is done
                return;
            }
            Q_EMIT head->writable();
            return;
        }
        m_queue.removeFirst();
        const bool close = head->m_broken || !head->m_context.keepAlive;
        head->deleteLater();
        if (close) {
            // What was written still goes out (disconnectFromHost drains first); the queue
            // behind a closing response is dropped, as the client will see the close.
            m_closing = true;
            for (const auto &rest : std::as_const(m_queue)) {
                if (rest) {
                    Q_EMIT rest->clientGone();
                    rest->deleteLater();
                }
            }
            m_queue.clear();
            m_socket->disconnectFromHost();
            return;
        }
    }
    armTimers();
}

void ClientConnection::armTimers()
{
    // Not while a request is still arriving: its body has its own timer.
    if (m_queue.isEmpty() && !m_closing && !m_headerTimer.isActive() && m_framer.inHead()) {
        m_idleTimer.start(m_limits.idleTimeout);
    }
}

void ClientConnection::onDisconnected()
{
    m_headerTimer.stop();
    m_idleTimer.stop();
    m_bodyTimer.stop();
    m_closing = true;
    const auto queue = std::exchange(m_queue, {});
    for (const auto &writer : queue) {
        if (writer) {
            Q_EMIT writer->clientGone();
            writer->deleteLater();
        }
    }
}

} // namespace slp
