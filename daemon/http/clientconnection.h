// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/requestframer.h"
#include "http/requesthandler.h"
#include "http/responsewriter.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <chrono>
#include <optional>

namespace slp {

struct ConnectionLimits
{
    RequestHeadLimits head;
    std::chrono::milliseconds headerTimeout{30000};
    std::chrono::milliseconds idleTimeout{120000};
};

// Everything SLP keeps per client connection: the strict head check that runs before
// QtHttpServer sees the bytes, the ordered response queue, and the header and idle timers.
class ClientConnection : public QObject
{
    Q_OBJECT
public:
    ClientConnection(QTcpSocket *socket, const ConnectionLimits &limits);
    ~ClientConnection() override;

    static ClientConnection *of(QTcpSocket *socket);

    QTcpSocket *socket() const { return m_socket; }
    bool isRejected() const { return m_rejected; }

    // The head SLP read for the request QtHttpServer is dispatching now, with the body length
    // SLP's own parse framed; State::Incomplete when SLP has none (the request is refused).
    RequestHead takeHead();
    // The next response's place in the queue (Qt child of this connection).
    ResponseWriter *openWriter(const ResponseContext &context);
    // Hands `request` to `handler` once every response before `writer` is finished: a client
    // connection is at most one exchange at a time, in order (RFC 9112 9.3.2).
    void dispatch(InboundRequest request, ResponseWriter *writer, RequestHandler &handler);
    // A request that closes the connection is queued: nothing after it is handled.
    bool isClosingAfterResponse() const { return m_closeQueued; }
    // Answers `status` and closes: a request SLP's own parse cannot stand behind.
    void refuse(int status, const QByteArray &message) { rejectWith(status, message); }
    // Shutdown: an idle connection closes now; a busy one closes after the responses it owes
    // (and a request that still arrives on it is answered with Connection: close).
    void beginShutdown();

Q_SIGNALS:
    // SLP answered a request itself with `status` before Qt saw it (malformed, too large, slow).
    void requestRejected(int status);

public:
    static constexpr qint64 kHighWater = 1024 * 1024; // socket bytes queued before pausing

private:
    friend class ResponseWriter;
    bool isHeadOfQueue(const ResponseWriter *writer) const;
    bool isBackedUp() const;
    void onReadyRead();
    void onBytesWritten();
    void onDisconnected();
    void onHeaderTimeout();
    void onBodyTimeout();
    void rejectWith(int status, const QByteArray &message);
    void pump();
    // Writes response bytes: to the kernel at once where it can (writeDirect), Qt the rest.
    void send(const QByteArray &bytes);
    // Hands what Qt holds to the kernel now (see the .cpp for when it must not).
    void flushNow();
    void armTimers();

    QPointer<QTcpSocket> m_socket;
    ConnectionLimits m_limits;
    QList<QPointer<ResponseWriter>> m_queue;
    struct Waiting
    {
        QPointer<ResponseWriter> writer;
        InboundRequest request;
        RequestHandler *handler;
    };
    QList<Waiting> m_waiting; // requests whose turn has not come, in order
    bool m_closeQueued = false;
    static constexpr qsizetype kMaxWaiting = 32; // pipelined requests held per connection
    void dispatchWaiting();
    RequestFramer m_framer; // the request being received: its head, then its body's framing
    bool m_continueSent = false;
    bool m_rejected = false;
    bool m_closing = false;
    bool m_inBytesWritten = false; // inside onBytesWritten(): no flush() (docs/QT64.md)
    bool m_flushing = false;       // inside flushNow(): its bytesWritten is not acted on
    bool m_shuttingDown = false;
    QTimer m_headerTimer;
    QTimer m_idleTimer;
    // Runs from the end of a request's head until Qt dispatches it: the whole body must arrive
    // within idle_timeout. Not restarted by reads, so a trickle cannot hold the connection
    // (neither the header nor the idle timer runs in that state).
    QTimer m_bodyTimer;
};

} // namespace slp
