// SPDX-License-Identifier: GPL-3.0-or-later
#include "http/httpfront.h"

#include "http/clientconnection.h"

#include <QHttpServerRequest>
#include <QTcpSocket>

namespace slp {

HttpFront::HttpFront(RequestHandler &handler, QObject *parent)
    : QAbstractHttpServer(parent), m_handler(handler)
{}

bool HttpFront::handleRequest(const QHttpServerRequest &, QTcpSocket *socket)
{
    // The far end of the Qt hop (ClientConnection::passThroughQt): Qt dispatched the head SLP
    // put back, and the connection hands on the request it framed itself. Nothing of Qt's
    // request object is read.
    if (ClientConnection *connection = ClientConnection::of(socket))
        connection->dispatch(m_handler);
    return true; // every request is answered by SLP, never by Qt
}

void HttpFront::missingHandler(const QHttpServerRequest &, QTcpSocket *)
{
    // handleRequest() answers every request itself.
}

} // namespace slp
