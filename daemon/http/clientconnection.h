#pragma once

#include "http/requesthead.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <chrono>
#include <optional>

namespace slp {

class ClientConnection;

// One response's place in its connection's queue. HTTP/1.1 answers pipelined requests in
// order, but QtHttpServer 6.4 dispatches the next request while the previous response is still
// open: whoever answers a request writes into its slot, and only the slot at the head of the
// queue reaches the socket. The others hold their bytes (and their producers stop reading
// upstream) until their turn.
class ResponseSlot : public QObject
{
    Q_OBJECT
public:
    ResponseSlot(ClientConnection *connection, bool keepAlive, int versionMinor);

    // Framed bytes (head and body), in order.
    void write(const QByteArray &bytes);
    // The response is complete; the connection stays open if both sides want keep-alive.
    void finish();
    // The response cannot be completed: what was written is flushed, then the connection is
    // closed without a clean end, so the client never mistakes a cut stream for a whole one.
    void breakConnection();

    // True when more bytes may be produced now: head of the queue and the socket not backed up.
    bool isWritable() const;
    // The Connection header line this response needs now (see connectionHeader()).
    QByteArray connectionHeader() const;
    int versionMinor() const { return m_versionMinor; }
    bool isFinished() const { return m_finished || m_broken; }
    void setKeepAlive(bool keepAlive) { m_keepAlive = keepAlive; }

Q_SIGNALS:
    // Room to write again (became the head, or the socket drained).
    void writable();
    // The client went away; the producer should stop at once (upstream aborted).
    void clientGone();

private:
    friend class ClientConnection;
    QPointer<ClientConnection> m_connection;
    QByteArray m_held;
    bool m_keepAlive;
    int m_versionMinor;
    bool m_finished = false;
    bool m_broken = false;
};

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

    // The head SLP read for the request QtHttpServer is dispatching now (nullopt-like
    // State::Incomplete when it could not be matched; callers then use Qt's view).
    RequestHead takeHead();
    ResponseSlot *openSlot(bool keepAlive, int versionMinor);
    // Shutdown: an idle connection closes now; a busy one closes after the responses it owes
    // (and a request that still arrives on it is answered with Connection: close).
    void beginShutdown();

Q_SIGNALS:
    // SLP answered a request itself with `status` before Qt saw it (malformed, too large, slow).
    void requestRejected(int status);

public:
    static constexpr qint64 kHighWater = 1024 * 1024; // socket bytes queued before pausing

private:
    friend class ResponseSlot;
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
    QList<QPointer<ResponseSlot>> m_queue;
    RequestHead m_current; // the head of the request being received
    bool m_haveCurrent = false;
    QByteArray m_accumulated; // head bytes seen so far, until the head is complete
    qint64 m_bodySeen = 0;    // body bytes of the current request seen so far
    std::optional<ChunkedBodyValidator> m_chunked; // the current request's chunked body
    bool m_continueSent = false;
    bool m_rejected = false;
    bool m_closing = false;
    bool m_inBytesWritten = false; // inside onBytesWritten(): no flush() (QT64-NOTES.md)
    bool m_flushing = false;       // inside flushNow(): its bytesWritten is not acted on
    bool m_shuttingDown = false;
    QTimer m_headerTimer;
    QTimer m_idleTimer;
    // Runs while a request's head is in but its body is not complete yet (Qt has not
    // dispatched it): restarted by every read, so only a body that stalls for idle_timeout
    // gets 408. Without it a client could send a head and half a body, then hold the
    // connection forever (neither the header nor the idle timer runs in that state).
    QTimer m_bodyTimer;
};

class ConnectionBudget;

// Accepts client connections: TCP_NODELAY on each (QtHttpServer sets none, and Nagle plus
// delayed ACK stalls small writes 40 ms), a ClientConnection attached before QtHttpServer
// connects its own handlers, and a cap (the budget every worker's listener shares) past which
// new connections wait in the accept queue.
class ClientListener : public QTcpServer
{
    Q_OBJECT
public:
    ClientListener(const ConnectionLimits &limits, ConnectionBudget *budget,
                   QObject *parent = nullptr);
    ~ClientListener() override;
    void setLimits(const ConnectionLimits &limits) { m_limits = limits; }
    // Stops accepting, drops the parked connections, and lets every open connection finish
    // what it owes and close (no new requests on kept-alive connections).
    void beginShutdown();

Q_SIGNALS:
    void connectionCountChanged(int open);
    void requestRejected(int status);

protected:
    void incomingConnection(qintptr handle) override;

private:
    void adopt(qintptr handle);
    void admitParked();

    ConnectionLimits m_limits;
    ConnectionBudget *m_budget; // the daemon's; outlives every listener
    int m_open = 0;
    // Accepted past the cap, not read: QTcpServer's accept loop keeps calling accept() after
    // pauseAccepting() until the kernel queue is empty, so a burst lands here beyond
    // max_connections. They wait here as they would have in the kernel's queue and are
    // adopted as connections close (on any worker).
    QList<qintptr> m_parked;
    static constexpr qsizetype kMaxParked = 4096; // the listen backlog slp asks for
};

} // namespace slp
