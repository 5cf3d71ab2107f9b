// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractHttpServer>

namespace slp {

class RequestHandler;

// The QtHttpServer front: each dispatch Qt makes is the far end of the Qt hop, handed to the
// ClientConnection of its socket, which passes the request it framed itself to the
// RequestHandler, one at a time per connection. It never writes through QHttpServerResponder:
// ResponseWriter frames every response SLP writes.
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
