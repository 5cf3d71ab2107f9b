// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractHttpServer>

namespace slp {

class RequestHandler;

// The QtHttpServer front: hands each request Qt dispatches to the ClientConnection of its
// socket, which meets it with SLP's own strict head (an InboundHandoff) and passes it to the
// RequestHandler, one at a time per connection. It never writes through
// QHttpServerResponder: ResponseWriter frames every response.
class HttpFront : public QAbstractHttpServer
{
    Q_OBJECT
public:
    // `handler` outlives the front (the worker owns both).
    explicit HttpFront(RequestHandler &handler, QObject *parent = nullptr);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    RequestHandler &m_handler;
};

} // namespace slp
