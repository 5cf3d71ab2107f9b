// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/responsequeue.h"

#include "http/lingeringclose.h"
#include "net/directwrite.h"

namespace slp {

ResponseQueue::ResponseQueue(QTcpSocket *socket) : m_socket(socket)
{
    connect(socket, &QTcpSocket::bytesWritten, this, &ResponseQueue::onBytesWritten);
}

ResponseWriter *ResponseQueue::open(const ResponseContext &context)
{
    ResponseContext effective = context;
    // Draining: answered, then closed (the response says Connection: close).
    effective.keepAlive = context.keepAlive && !m_draining;
    auto *writer = new ResponseWriter(this, effective); // Qt child of the queue
    m_writers.append(writer);
    return writer;
}

void ResponseQueue::dispatch(InboundRequest request, ResponseWriter *writer,
                             RequestHandler &handler)
{
    if (writer->closesConnection())
        m_closeQueued = true;
    if (m_waiting.isEmpty() && isTurnOf(writer)) {
        handler.handle(std::move(request), writer);
        return;
    }
    if (m_waiting.size() >= kMaxWaiting) {
        // Bounded: each held request keeps its body in memory.
        writer->setKeepAlive(false);
        m_closeQueued = true;
        m_linger = true; // the requests behind it may still be arriving
        writer->respondError(503, QStringLiteral("too many pipelined requests on one connection"));
        return;
    }
    m_waiting.append({writer, std::move(request), &handler});
}

void ResponseQueue::dispatchWaiting()
{
    while (!m_waiting.isEmpty()) {
        Waiting &next = m_waiting.first();
        if (!next.writer) {
            m_waiting.removeFirst(); // its client left
            continue;
        }
        if (!isTurnOf(next.writer))
            return;
        Waiting turn = m_waiting.takeFirst();
        turn.handler->handle(std::move(turn.request), turn.writer);
        return; // the handler may have finished it: advance() comes back here
    }
}

bool ResponseQueue::isTurnOf(const ResponseWriter *writer) const
{
    return m_socket && !m_writers.isEmpty() && m_writers.first() == writer;
}

bool ResponseQueue::isBackedUp() const
{
    return !m_socket || m_socket->bytesToWrite() >= kHighWater;
}

void ResponseQueue::closeAfterOwed()
{
    m_draining = true;
    for (const auto &writer : std::as_const(m_writers))
        if (writer)
            writer->setKeepAlive(false);
}

void ResponseQueue::close()
{
    m_closing = true;
    if (!m_socket)
        return;
    if (m_linger)
        LingeringClose::start(m_socket);
    else
        m_socket->disconnectFromHost();
}

void ResponseQueue::abandon()
{
    m_closing = true;
    const auto writers = std::exchange(m_writers, {});
    for (const auto &writer : writers) {
        if (writer) {
            Q_EMIT writer->clientGone();
            writer->deleteLater();
        }
    }
}

void ResponseQueue::advance()
{
    while (!m_writers.isEmpty() && m_socket) {
        ResponseWriter *head = m_writers.first();
        if (!head) {
            m_writers.removeFirst();
            continue;
        }
        if (const QByteArray held = head->takeHeld(); !held.isEmpty())
            send(held);
        if (!head->isFinished()) {
            if (!m_waiting.isEmpty() && m_waiting.first().writer == head) {
                dispatchWaiting(); // its turn: the one before it is done
                return;
            }
            Q_EMIT head->writable();
            return;
        }
        m_writers.removeFirst();
        const bool closes = head->closesConnection();
        head->deleteLater();
        if (closes) {
            closeBehind();
            return;
        }
    }
    Q_EMIT drained();
}

void ResponseQueue::closeBehind()
{
    // What was written still goes out (disconnectFromHost drains first); the queue behind a
    // closing response is dropped, as the client will see the close.
    abandon();
    close();
}

void ResponseQueue::onBytesWritten()
{
    if (m_flushing)
        return; // our own flushNow(): the writer checks isWritable() itself
    if (!m_socket || m_writers.isEmpty()) {
        Q_EMIT drained();
        return;
    }
    if (m_socket->bytesToWrite() < kHighWater) {
        if (ResponseWriter *head = m_writers.first()) {
            const QPointer<ResponseQueue> guard(this);
            m_inBytesWritten = true;
            Q_EMIT head->writable();
            if (guard)
                m_inBytesWritten = false;
        }
    }
}

void ResponseQueue::send(const QByteArray &bytes)
{
    if (writeDirect(m_socket, bytes) < bytes.size())
        flushNow(); // Qt holds the rest
}

void ResponseQueue::flushNow()
{
    // Left to Qt, a write enables the socket's write notifier and goes out on the next loop
    // pass: two eventfd wake-ups, two more polls and a read per SSE event (strace). Writing
    // now saves them. Never inside bytesWritten: flushing there drains the socket without a
    // further bytesWritten, and a backpressured relay would never wake up (docs/QT64.md, "flush
    // in bytesWritten").
    if (m_inBytesWritten || m_flushing || !m_socket)
        return;
    m_flushing = true;
    const QPointer<ResponseQueue> guard(this);
    m_socket->flush();
    if (guard)
        m_flushing = false;
}

} // namespace slp
