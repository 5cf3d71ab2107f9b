// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/http1.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QString>

#include <utility>

namespace slp {

class ResponseQueue;

// A response head as its producer sees it: the end-to-end headers only. Framing
// (Content-Length, Transfer-Encoding) and Connection are the writer's alone.
struct ResponseHead
{
    int status = 200;
    QByteArray reason;         // empty: the standard phrase
    HeaderList headers;        // no framing or hop-by-hop fields
    qint64 contentLength = -1; // -1: not known yet (chunked to 1.1 clients, close for 1.0)
};

// What the writer needs to know of the request it answers.
struct ResponseContext
{
    bool keepAlive = true; // both sides allow the connection to carry another request
    int versionMinor = 1;  // HTTP/1.x of the request
    bool headRequest = false;
};

// The one place that frames bytes for a client: one per response, in its connection's
// ResponseQueue. Only the writer whose turn it is reaches the socket; the others hold their
// bytes, and their producers stop reading upstream, until their turn.
//
// Framing is decided once, from the head: a known length is written as Content-Length and the
// writer never writes past it; an unknown one is chunked for HTTP/1.1 and ends with the
// connection for HTTP/1.0. Statuses without a body (1xx, 204, 304) and answers to HEAD carry
// none. A response that cannot be completed is never ended cleanly: the connection closes.
class ResponseWriter : public QObject
{
    Q_OBJECT
public:
    ResponseWriter(ResponseQueue *queue, const ResponseContext &context);

    // A whole response SLP answers itself, with Content-Length and X-Request-Id (a fresh id
    // when `requestId` is empty).
    void respond(int status, const QByteArray &contentType, const QByteArray &body,
                 const QByteArray &requestId, const HeaderList &extraHeaders = {});
    // An OpenAI-style error response (see errorbody.h for the body and its type by status).
    void respondError(int status, const QString &message, const QByteArray &requestId = {},
                      const QByteArray &code = {}, const QString &param = {});

    // A streamed response: the head, then the body in pieces, then finish().
    void writeHead(const ResponseHead &head);
    // False when `piece` runs past the announced Content-Length: the bytes up to the length
    // are written, the rest is not, and the caller ends the response with breakConnection().
    bool writeBody(const QByteArray &piece);
    // The response is complete; the connection stays open if both sides want keep-alive. A
    // body shorter than its announced length is broken instead, never a clean end.
    void finish();
    // The response cannot be completed: what was written is flushed, then the connection is
    // closed without a clean end (no terminating chunk), so the client never mistakes a cut
    // stream for a whole one.
    void breakConnection();

    // True when more bytes may be produced now: head of the queue and the socket not backed up.
    bool isWritable() const;
    bool isHeadWritten() const { return m_framing != Framing::NotYet; }
    bool isFinished() const { return m_finished || m_broken; }
    // The client connection closes after this response (draining, or a request that asked).
    void setKeepAlive(bool keepAlive) { m_context.keepAlive = keepAlive; }
    // True when the connection ends after this response: broken, or not kept alive.
    bool closesConnection() const { return m_broken || !m_context.keepAlive; }

    // An interim 100 Continue, queued like any response so it can never land inside an
    // earlier response still being written.
    void writeContinue();
    // A WebSocket tunnel takes the client connection from HTTP (ClientConnection::
    // takeForTunnel): its descriptor, now the caller's, or -1; `early` gets the bytes the client
    // sent after its request; `owner` the closed socket object, to deleteLater() when the
    // tunnel ends (what hangs on it, this writer included, goes with it).
    int takeConnection(QByteArray *early, QObject **owner);
    // For the queue: the bytes written before this writer's turn, handed over once.
    QByteArray takeHeld() { return std::exchange(m_held, {}); }

Q_SIGNALS:
    // Room to write again (became the head, or the socket drained).
    void writable();
    // The client went away; the producer should stop at once (upstream aborted).
    void clientGone();

private:
    enum class Framing
    {
        NotYet,  // no head written
        None,    // no body may follow (1xx, 204, 304, HEAD)
        Length,  // Content-Length: m_remaining more bytes
        Chunked, // Transfer-Encoding: chunked
        Close,   // HTTP/1.0, length unknown: the body ends with the connection
    };
    void put(const QByteArray &bytes);
    // A finished or broken response lets the queue move on.
    void advanceQueue();

    QPointer<ResponseQueue> m_queue;
    ResponseContext m_context;
    QByteArray m_held;
    Framing m_framing = Framing::NotYet;
    qint64 m_remaining = 0;
    bool m_finished = false;
    bool m_broken = false;
};

// The status line and fields of a head, exactly as written: `framing` is the writer's
// Content-Length / Transfer-Encoding line (or empty), `connection` its Connection line.
QByteArray serializeHead(int status, const QByteArray &reason, const HeaderList &headers,
                         const QByteArray &framing, const QByteArray &connection);

} // namespace slp
