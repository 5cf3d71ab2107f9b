// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/httpfront.h"

#include "http/clientconnection.h"
#include "http/requesthandler.h"

#include <QHttpServerRequest>
#include <QTcpSocket>

namespace slp {

namespace {
QByteArray clientAddress(const QHostAddress &address)
{
    bool mapped = false;
    const quint32 v4 = address.toIPv4Address(&mapped);
    return (mapped ? QHostAddress(v4) : address).toString().toLatin1();
}
} // namespace

HttpFront::HttpFront(RequestHandler &handler, QObject *parent)
    : QAbstractHttpServer(parent), m_handler(handler)
{}

bool HttpFront::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    ClientConnection *connection = ClientConnection::of(socket);
    if (!connection || connection->isRejected() || connection->isClosingAfterResponse()) {
        return true; // answered with an error, or after a request that closes: never handled
    }
    RequestHead head = connection->takeHead();
    // SLP's parse alone decides framing: a request Qt framed differently is refused, so no
    // byte of one request is ever taken for another (docs/QT64.md).
    if (head.state != RequestHead::State::Complete) {
        connection->refuse(400, "request framing could not be confirmed");
        return true;
    }
    if (request.body().size() != head.bodyBytes) {
        connection->refuse(400, "request body length does not match its framing");
        return true;
    }
    InboundRequest in;
    // Copy everything now: QtHttpServer reuses this request object for the next one.
    in.body = request.body();
    in.clientAddress = clientAddress(socket->peerAddress());
    in.method = std::move(head.method);
    in.target = std::move(head.target);
    in.headers = std::move(head.headers);
    ResponseContext context;
    context.keepAlive = head.keepAlive;
    context.versionMinor = head.versionMinor;
    context.headRequest = in.method == "HEAD";
    ResponseWriter *writer = connection->openWriter(context);
    connection->dispatch(std::move(in), writer, m_handler);
    return true;
}

void HttpFront::missingHandler(const QHttpServerRequest &, QTcpSocket *)
{
    // handleRequest() answers every request itself.
}

} // namespace slp
