// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractHttpServer>

namespace slp {

class RequestHandler;

// The QtHttpServer front: turns each request Qt dispatches into an InboundRequest from SLP's
// own strict head (a request Qt framed differently is refused), opens its writer in the
// connection's response queue and hands both to its RequestHandler, one at a time per
// connection. It never writes through QHttpServerResponder: ResponseWriter frames every
// response.
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
