// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/socket/peerend.h"
#include "upstream/socket/socketdialer.h"
#include "upstream/upstreamtransport.h"
#include "wire/responseparser.h"

#include <QAbstractSocket>
#include <QObject>
#include <QPointer>

class QTcpSocket;

namespace slp {

// What a SocketCall needs of its transport's keep-alive pool (SocketTransport is one). A
// QObject so that a call outliving its pool (a worker stopping) notices it is gone.
class IdlePool : public QObject
{
public:
    using QObject::QObject;
    // The most recently idled live connection of `key` (an origin), now the caller's; or null.
    virtual QTcpSocket *take(const QString &key) = 0;
    // Keeps a connection whose exchange ended cleanly, or closes it when the pool is full.
    virtual void release(const QString &key, QTcpSocket *socket) = 0;
    // Closes an idle connection that did anything (data, close, error): it is useless now.
    virtual void drop(QTcpSocket *socket) = 0;
};

class SocketCall;

// Wired to its socket once, for the socket's whole life: it hands the socket's signals to the
// call using it, or, while the socket idles in the pool, tells the pool to drop it. Connecting
// and disconnecting five signals per request cost more than parsing the response.
class SocketLink : public QObject
{
public:
    SocketLink(QTcpSocket *socket, IdlePool *pool);
    static SocketLink *of(QTcpSocket *socket);

    SocketCall *call = nullptr; // the call using the socket; null while pooled or discarded
    QPointer<IdlePool> pool;
    // Taken once connected, so a pooled connection keeps it: one dup per connection.
    SocketShadow shadow;

private:
    void idleEvent(QTcpSocket *socket);
};

// One exchange on a pooled connection of the endpoint or, when there is none or it dies
// before the request went out, on a new connection; the response parsed with http-parser.
class SocketCall : public UpstreamCall
{
public:
    // `head` and `body`: the request as it goes on the wire (requestHead() made the head).
    SocketCall(IdlePool *pool, SocketEndpoint endpoint, QByteArray head, ByteChain body,
               bool headRequest, Observer &observer);

    ~SocketCall() override { closeSocket(); }

    // Sends the request on the pool's warmest connection of the endpoint, or a new one. A
    // failure already known here reaches the observer from inside: isRunning() is then false.
    void begin();

    qint64 bytesAvailable() const override { return m_response.buffered(); }
    bool isRunning() const override { return !m_finished; }

    QByteArray read(qint64 maxBytes) override;

    void abort() override;

private:
    // --- connection ---------------------------------------------------------------------

    void dial();

    void attach(QTcpSocket *socket);

    // Hands the socket back: its signals stop reaching this call.
    QTcpSocket *detach();

    // --- the socket's events, from its SocketLink ------------------------------------------
    friend class SocketLink;
    void onConnected();
    void onReadyRead();
    void onWritten(qint64 n) { m_written += n; }
    void onDisconnected();

    void writeRequest();

    void closeSocket();

    // The connection's resolved address, once known: the exchange logs it after the URL.
    void notePeer();

    // What a failure's detail starts with: the endpoint dialled while no address is known.
    QString where();

    // A reused connection that died before the upstream can have seen a whole request head:
    // nothing of the request can have been processed, so it may go out on a fresh one, once.
    bool mayRedial() const;

    void redial();

    void onError(QAbstractSocket::SocketError error);

    // --- reading ------------------------------------------------------------------------

    void pump();

    void resume();

    void handleEof();

    // Whether the upstream reset the connection rather than closing it (Qt says "closed").
    bool peerReset() const;

    // Parses one piece; false when the call finished (or was deleted) meanwhile.
    bool process(const QByteArray &data);

    // Emits what the parser produced; true when the call is finished (or gone).
    bool emitProgress();

    void succeed();

    void fail(Failure failure, const QString &detail);

    void finishNow();

    QPointer<IdlePool> m_pool;
    SocketDialer m_dialer; // the endpoint, and how its connections are opened
    QByteArray m_head;
    ByteChain m_body;
    bool m_headRequest;

    QTcpSocket *m_socket = nullptr; // ours while the call runs; the pool's once released
    bool m_reused = false;
    bool m_redialed = false;
    qint64 m_written = 0;  // request bytes the kernel took on this connection
    qint64 m_received = 0; // response bytes read on this connection

    ResponseParser m_response;

    bool m_paused = false;
    bool m_resumeQueued = false;
    bool m_peerClosed = false;
    bool m_finished = false;
};

// Whether a pooled connection can carry another request (nothing arrived, still connected).
bool stillUsable(QTcpSocket *socket, bool tls);
// Closes a connection for good.
void discard(QTcpSocket *socket);

} // namespace slp
