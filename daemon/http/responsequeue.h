// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/requesthandler.h"
#include "http/responsewriter.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpSocket>

namespace slp {

// The responses one client connection owes, in the order its requests came, and the one way
// their bytes reach the socket. HTTP/1.1 answers pipelined requests in order (RFC 9112
// 9.3.2), but QtHttpServer 6.4 dispatches the next request while the previous response is
// still open (docs/QT64.md, "Pipelining"): a request waits here until every response before
// it is finished, and only the writer at the head of the queue writes to the socket.
class ResponseQueue : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 kHighWater = 1024 * 1024; // socket bytes queued before pausing

    explicit ResponseQueue(QTcpSocket *socket);

    // For the connection:
    // The next response's place in the queue (a Qt child of the queue).
    ResponseWriter *open(const ResponseContext &context);
    // Hands `request` to `handler` once every response before `writer` is finished: a client
    // connection is at most one exchange at a time, in order.
    void dispatch(InboundRequest request, ResponseWriter *writer, RequestHandler &handler);
    bool isEmpty() const { return m_writers.isEmpty(); }
    QTcpSocket *socket() const { return m_socket; }
    // A response that closes the connection is queued: nothing after it is handled.
    bool isClosingAfterResponse() const { return m_closeQueued; }
    // Shutdown: every response owed, and every one opened from now on, closes the connection
    // after it (closing after a complete response is always allowed).
    void closeAfterOwed();
    // The connection closes now (what was written still goes out first).
    void close();
    // An answer went out before its request was read whole: the close lingers
    // (LingeringClose), so the client reads the answer rather than a reset.
    void lingerOnClose() { m_linger = true; }
    bool isClosing() const { return m_closing; }
    // The client left: every writer hears clientGone and is dropped.
    void abandon();

    // For its writers:
    bool isTurnOf(const ResponseWriter *writer) const;
    // True when the socket holds kHighWater bytes or more (or is gone).
    bool isBackedUp() const;
    // Writes response bytes: to the kernel at once where it can (writeDirect), Qt the rest.
    void send(const QByteArray &bytes);
    // The head writer finished or broke: what the next one held goes out, and it gets its
    // turn (or its request is handed over).
    void advance();

Q_SIGNALS:
    // Nothing is owed right now: the connection may start its idle timer.
    void drained();

private:
    struct Waiting
    {
        QPointer<ResponseWriter> writer;
        InboundRequest request;
        RequestHandler *handler;
    };
    static constexpr qsizetype kMaxWaiting = 32; // pipelined requests held per connection

    void dispatchWaiting();
    // A response ended the connection: the ones behind it are dropped.
    void closeBehind();
    void onBytesWritten();
    // Hands what Qt holds to the kernel now (see the .cpp for when it must not).
    void flushNow();

    QPointer<QTcpSocket> m_socket;
    QList<QPointer<ResponseWriter>> m_writers;
    QList<Waiting> m_waiting; // requests whose turn has not come, in order
    bool m_closeQueued = false;
    bool m_closing = false;
    bool m_linger = false;
    bool m_draining = false;       // shutdown: no response keeps the connection
    bool m_inBytesWritten = false; // inside onBytesWritten(): no flush() (docs/QT64.md)
    bool m_flushing = false;       // inside flushNow(): its bytesWritten is not acted on
};

} // namespace slp
