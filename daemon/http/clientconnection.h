// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/bodybudget.h"
#include "http/requestframer.h"
#include "http/requesthandler.h"
#include "http/responsequeue.h"
#include "http/responsewriter.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <chrono>
#include <memory>
#include <vector>

namespace slp {

namespace test {
class ConnectionPair;
}

struct ConnectionLimits
{
    RequestHeadLimits head;
    std::chrono::milliseconds headerTimeout{30000};
    std::chrono::milliseconds idleTimeout{120000};
    qint64 maxBufferedBodyBytes = 0;  // 0: BodyBudget::defaultLimit()
    BodyBudget *bodyBudget = nullptr; // nullptr: the process's
    ModelScanFactory scanModel;       // empty: no body is scanned as it arrives
};

// Everything SLP keeps per client connection. A request takes this path through it:
//  1. onReadyRead(): SLP's strict RequestFramer reads the request off the socket, head and
//     body, before QtHttpServer sees a byte of it (limits, header and body timers,
//     100 Continue); a bad request is answered here. The body lands in its one buffer.
//  2. handToFront(): a head of SLP's own is put back for QtHttpServer, which dispatches it
//     at once; HttpFront hands the dispatch to receive().
//  3. receive(): SLP's head and body become one request in an InboundHandoff; the request is
//     refused, or given a ResponseWriter in the ResponseQueue and handed to its handler in
//     turn.
class ClientConnection : public QObject
{
    Q_OBJECT
public:
    ClientConnection(QTcpSocket *socket, const ConnectionLimits &limits);
    ~ClientConnection() override;

    static ClientConnection *of(QTcpSocket *socket);

    QTcpSocket *socket() const { return m_socket; }

    // QtHttpServer dispatched a request with `dispatchedBody` on this connection.
    void receive(const QByteArray &dispatchedBody, RequestHandler &handler);
    // Shutdown: an idle connection closes now; a busy one closes after the responses it owes
    // (and a request that still arrives on it is answered with Connection: close).
    void beginShutdown();
    // The connection leaves HTTP for a WebSocket tunnel: its descriptor (now the caller's; -1
    // when the connection is gone) and, in `early`, the bytes the client sent after its
    // upgrade request. From here the QTcpSocket is closed and nothing reads or answers on it;
    // it only owns this object until the tunnel deletes it.
    int takeForTunnel(QByteArray *early);
    bool isTunneled() const { return m_tunneled; }

    // A chunked body is validated and decoded from at most this much of a read at a time.
    static constexpr qint64 kChunkedReadBytes = 256 * 1024;
    // What Qt may still read from the kernel while a body waits for the budget.
    static constexpr qint64 kPausedReadBuffer = 64 * 1024;

Q_SIGNALS:
    // SLP answered a request itself with `status` before Qt saw it (malformed, too large, slow).
    void requestRejected(int status);

private:
    friend class test::ConnectionPair; // unit tests open writers as requests would

    // The next response's place in the queue.
    ResponseWriter *openWriter(const ResponseContext &context);
    void onReadyRead();
    // One step of the current request off the socket; false once it was rejected.
    bool readHead();
    bool readBody();
    // The request is whole: QtHttpServer gets the head that makes it dispatch.
    void handToFront();
    // Memory for the body before its bytes are read (max_buffered_body_bytes): false while
    // the connection waits for it, or once the body was refused.
    bool reserveBody(qint64 bytes);
    bool reserveChunkedRoom(qint64 incoming);
    void waitForBudget();
    void resumeWith(std::unique_ptr<BodyBudget::Lease> lease);
    // Keeps unread bytes in the socket, out of QtHttpServer's sight, while the body waits.
    void hideUnread();
    void stopWaitingForBudget();
    BodyBudget &budget() const;
    // A 100 Continue for a client that waits for one before sending its body.
    void answerExpect(qint64 available, qsizetype headBytes);
    // The head SLP read for the request Qt is dispatching now, with the body length SLP's own
    // parse framed; State::Incomplete when SLP has none.
    RequestHead takeHead();
    void onDisconnected();
    void onHeaderTimeout();
    void onBodyTimeout();
    void rejectWith(int status, const QByteArray &message);
    void armIdleTimer();

    QPointer<QTcpSocket> m_socket;
    ConnectionLimits m_limits;
    ResponseQueue m_responses;
    RequestFramer m_framer; // the request being received: its head, then its body's framing
    bool m_continueSent = false;
    bool m_awaitingDispatch = false; // handToFront() done, receive() not yet
    bool m_waitingForBudget = false;
    std::vector<std::unique_ptr<BodyBudget::Lease>> m_leases; // the current body's memory
    std::unique_ptr<ModelLocator> m_modelScan; // the current body's, shown every read
    bool m_largeBodyRefused = false;           // its buffer is freed with the connection: trim then
    qint64 m_reserved = 0;
    bool m_rejected = false;
    // A WebSocket upgrade was asked: after its head, the bytes are the tunnel's, never read as
    // HTTP (they wait in the socket until the router tunnels or answers and closes).
    bool m_upgradeAsked = false;
    bool m_tunneled = false;
    QTimer m_headerTimer;
    QTimer m_idleTimer;
    // Runs from the end of a request's head until Qt dispatches it: the whole body must arrive
    // within idle_timeout. Not restarted by reads, so a trickle cannot hold the connection
    // (neither the header nor the idle timer runs in that state).
    QTimer m_bodyTimer;
};

} // namespace slp
