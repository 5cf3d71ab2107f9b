// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/responsewriter.h"

#include "http/clientconnection.h"
#include "http/errorbody.h"
#include "http/responsequeue.h"
#include "observe/requestid.h"

namespace slp {

namespace {
// The Connection line a response needs, or nothing: "close" when the connection ends after
// it, "keep-alive" for an HTTP/1.0 client that asked to keep it (1.0 closes by default, so its
// client keeps a connection only when the answer says so).
QByteArray connectionLine(bool keepAlive, int versionMinor)
{
    if (!keepAlive)
        return QByteArrayLiteral("Connection: close\r\n");
    return versionMinor == 0 ? QByteArrayLiteral("Connection: keep-alive\r\n") : QByteArray();
}

} // namespace

QByteArray serializeHead(int status, const QByteArray &reason, const HeaderList &headers,
                         const QByteArray &framing, const QByteArray &connection)
{
    QByteArray out;
    out.reserve(256 + headers.size() * 48);
    out += "HTTP/1.1 " + QByteArray::number(status) + ' ' +
           (reason.isEmpty() ? reasonPhrase(status) : reason) + "\r\n";
    for (const auto &[name, value] : headers)
        out += name + ": " + value + "\r\n";
    out += framing;
    out += connection;
    out += "\r\n";
    return out;
}

ResponseWriter::ResponseWriter(ResponseQueue *queue, const ResponseContext &context)
    : QObject(queue), m_queue(queue), m_context(context)
{}

void ResponseWriter::respond(int status, const QByteArray &contentType, const QByteArray &body,
                             const QByteArray &requestId, const HeaderList &extraHeaders)
{
    ResponseHead head;
    head.status = status;
    head.headers.reserve(extraHeaders.size() + 2);
    head.headers.append({QByteArrayLiteral("Content-Type"), contentType});
    head.headers.append(
        {QByteArrayLiteral("X-Request-Id"), requestId.isEmpty() ? newRequestId() : requestId});
    head.headers += extraHeaders;
    head.contentLength = body.size();
    writeHead(head);
    writeBody(body);
    finish();
}

void ResponseWriter::respondError(int status, const QString &message, const QByteArray &requestId,
                                  const QByteArray &code, const QString &param)
{
    respond(status, "application/json", openAiErrorBody(status, message, code, param), requestId);
}

void ResponseWriter::writeHead(const ResponseHead &head)
{
    if (isFinished() || isHeadWritten())
        return;
    QByteArray framing;
    if (statusHasNoBody(head.status)) {
        m_framing = Framing::None;
    } else if (head.contentLength >= 0) {
        // A HEAD answer says how long the body would be, and sends none of it.
        framing = "Content-Length: " + QByteArray::number(head.contentLength) + "\r\n";
        m_framing = m_context.headRequest ? Framing::None : Framing::Length;
        m_remaining = head.contentLength;
    } else if (m_context.headRequest) {
        m_framing = Framing::None;
    } else if (m_context.versionMinor >= 1) {
        // QtHttpServer 6.4 writes no framing for a streamed body (docs/QT64.md): chunk it.
        framing = QByteArrayLiteral("Transfer-Encoding: chunked\r\n");
        m_framing = Framing::Chunked;
    } else {
        m_framing = Framing::Close; // HTTP/1.0: the body ends when the connection does
        m_context.keepAlive = false;
    }
    put(serializeHead(head.status, head.reason, head.headers, framing,
                      connectionLine(m_context.keepAlive, m_context.versionMinor)));
}

bool ResponseWriter::writeBody(const QByteArray &piece)
{
    if (isFinished() || piece.isEmpty())
        return true;
    switch (m_framing) {
    case Framing::NotYet:
        return false; // a body before its head is a producer bug: nothing is written
    case Framing::None:
        return true; // dropped: this response carries no body
    case Framing::Chunked:
        put(QByteArray::number(piece.size(), 16) + "\r\n" + piece + "\r\n");
        return true;
    case Framing::Close:
        put(piece);
        return true;
    case Framing::Length:
        if (piece.size() <= m_remaining) {
            m_remaining -= piece.size();
            put(piece);
            return true;
        }
        // Never past the announced length: the excess would be read as the next response on
        // a kept-alive connection.
        put(piece.left(m_remaining));
        m_remaining = 0;
        return false;
    }
    return false;
}

void ResponseWriter::finish()
{
    if (isFinished())
        return;
    if (m_framing == Framing::NotYet || (m_framing == Framing::Length && m_remaining > 0)) {
        breakConnection(); // no head, or a body shorter than announced: never a clean end
        return;
    }
    if (m_framing == Framing::Chunked)
        put(QByteArrayLiteral("0\r\n\r\n"));
    m_finished = true;
    advanceQueue();
}

void ResponseWriter::breakConnection()
{
    if (isFinished())
        return;
    m_broken = true;
    m_context.keepAlive = false;
    advanceQueue();
}

void ResponseWriter::writeContinue()
{
    put(QByteArrayLiteral("HTTP/1.1 100 Continue\r\n\r\n"));
    m_framing = Framing::None;
    m_context.keepAlive = true; // the final response follows in its own writer
    m_finished = true;
    advanceQueue();
}

int ResponseWriter::takeConnection(QByteArray *early, QObject **owner)
{
    ClientConnection *connection = m_queue ? ClientConnection::of(m_queue->socket()) : nullptr;
    if (!connection || !m_queue->isTurnOf(this))
        return -1;
    *owner = m_queue->socket();
    return connection->takeForTunnel(early);
}

void ResponseWriter::put(const QByteArray &bytes)
{
    if (!m_queue)
        return;
    if (m_queue->isTurnOf(this))
        m_queue->send(bytes);
    else
        m_held += bytes;
}

void ResponseWriter::advanceQueue()
{
    if (m_queue)
        m_queue->advance();
}

bool ResponseWriter::isWritable() const
{
    return m_queue && m_queue->isTurnOf(this) && !m_queue->isBackedUp();
}

} // namespace slp
