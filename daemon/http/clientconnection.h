// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/bodyreservation.h"
#include "http/requestframer.h"
#include "http/requesthandler.h"
#include "http/responsequeue.h"
#include "http/responsewriter.h"

#include <QByteArray>
#include <QHostAddress>
#include <QObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <chrono>
#include <memory>

namespace slp {

namespace test {
class ConnectionPair;
}

// What every client connection of a listener is made with: its limits, and the parts it uses
// that outlive it.
struct ConnectionSettings
{
    RequestHeadLimits head;
    std::chrono::milliseconds headerTimeout{30000};
    std::chrono::milliseconds idleTimeout{120000};
    BodyBudget *bodies = nullptr; // max_buffered_body_bytes, the daemon's (required)
    ModelScanFactory scanModel;   // empty: no body is scanned as it arrives
#ifdef SLP_MEASURE_WITHOUT_QT_HOP
    // A build for the measurement in docs/DECISIONS.md only: requests skip Qt's dispatch.
    RequestHandler *handlerWithoutQt = nullptr;
#endif
};

// A request as SLP's framer finished it: what its handler gets and what its response's writer
// needs. Built once, where the framer finishes (the head's part at the head, the body at the
// body's end); nothing checks it again.
struct FramedRequest
{
    InboundRequest request;
    ResponseContext response;

    // The head's part: everything but the body.
    static FramedRequest fromHead(const RequestHead &head, const QHostAddress &peer);
    // The client's address as logs and X-Forwarded-For show it: an IPv4-mapped IPv6 address
    // as plain IPv4.
    static QByteArray clientAddress(const QHostAddress &peer);
};

// One client connection: a read loop with one stage at a time (HAProxy drives a message with
// one state) and the three timers of a request's life. Each read is taken off the socket by
// SLP's strict RequestFramer before QtHttpServer sees a byte of it: the head (limits, the
// header timer, 100 Continue), then the body into its one buffer, its memory reserved first
// (BodyReservation). A bad request is answered here. A whole request goes through the Qt hop
// (passThroughQt, then dispatch) to the ResponseQueue and its handler.
class ClientConnection : public QObject
{
    Q_OBJECT
public:
    enum class Stage
    {
        Head,             // reading a request's head (or idle between requests)
        Body,             // reading its body
        WaitingForMemory, // its body waits for max_buffered_body_bytes; the socket is not read
        Dispatching,      // whole: handed to QtHttpServer, whose dispatch comes next
        Upgrading,        // a WebSocket upgrade in the router's hands; its bytes wait unread
        Tunneled,         // the connection left HTTP for a tunnel
        Rejected,         // answered with an error; nothing more is read as HTTP
    };

    ClientConnection(QTcpSocket *socket, const ConnectionSettings &settings);
    ~ClientConnection() override;

    static ClientConnection *of(QTcpSocket *socket);

    QTcpSocket *socket() const { return m_socket; }
    Stage stage() const { return m_stage; }

    // The Qt hop's far end: QtHttpServer dispatched the head SLP put back (HttpFront calls
    // this); the request SLP framed goes to `handler` in its turn.
    void dispatch(RequestHandler &handler);
    // Shutdown: an idle connection closes now; a busy one closes after the responses it owes
    // (and a request that still arrives on it is answered with Connection: close).
    void beginShutdown();
    // The connection leaves HTTP for a WebSocket tunnel: its descriptor (now the caller's; -1
    // when the connection is gone) and, in `early`, the bytes the client sent after its
    // upgrade request. From here the QTcpSocket is closed and nothing reads or answers on it;
    // it only owns this object until the tunnel deletes it.
    int takeForTunnel(QByteArray *early);

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
    // One step of the current request off the socket; false once it stopped (rejected, or
    // waiting for memory).
    bool readHead();
    bool readBody();
    // The head is whole: 100 Continue, the body timer, and the body's memory or the hop.
    bool headDone(qint64 available, qsizetype headBytes);
    // The request is whole: the Qt hop's near end.
    void passThroughQt();
    // Memory for the body before its bytes are read: false while the connection waits for
    // it, or once the body was refused.
    bool reserved(BodyReservation::Answer answer);
    void onMemoryGranted();
    // Keeps unread bytes in the socket, out of QtHttpServer's sight (while a body waits for
    // memory, or an upgrade for the router).
    void hideUnread();
    void readAgain();
    void onDisconnected();
    void onHeaderTimeout();
    void onBodyTimeout();
    void rejectWith(int status, const QByteArray &message);
    void armIdleTimer();

    QPointer<QTcpSocket> m_socket;
    ConnectionSettings m_settings;
    ResponseQueue m_responses;
    RequestFramer m_framer; // the request being received: its head, then its body's framing
    Stage m_stage = Stage::Head;
    BodyReservation m_body;
    FramedRequest m_request; // the request being received, as far as it is framed
    QTimer m_headerTimer;
    QTimer m_idleTimer;
    // Runs from the end of a request's head until its dispatch: the whole body must arrive
    // within idle_timeout. Not restarted by reads, so a trickle cannot hold the connection
    // (neither the header nor the idle timer runs in that stage).
    QTimer m_bodyTimer;
};

} // namespace slp
