// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/httpfront.h"

#include "http/clientconnection.h"

#include <QHttpServerRequest>
#include <QTcpSocket>

namespace slp {

HttpFront::HttpFront(RequestHandler &handler, QObject *parent)
    : QAbstractHttpServer(parent), m_handler(handler)
{}

bool HttpFront::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    // The connection SLP attached to this socket meets Qt's dispatch with its own parse of the
    // head (ClientConnection::receive). The body is copied now: QtHttpServer reuses this
    // request object for the next one.
    if (ClientConnection *connection = ClientConnection::of(socket))
        connection->receive(request.body(), m_handler);
    return true; // every request is answered by SLP, never by Qt
}

void HttpFront::missingHandler(const QHttpServerRequest &, QTcpSocket *)
{
    // handleRequest() answers every request itself.
}

} // namespace slp
