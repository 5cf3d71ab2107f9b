#pragma once

#include <QAbstractHttpServer>

namespace slp {

class RequestHandler;

// The QtHttpServer front: turns each parsed request into an InboundRequest (SLP's own strict
// head when it has one, Qt's view otherwise), opens its slot in the connection's response
// queue and hands both to its RequestHandler. It never writes through QHttpServerResponder: SLP
// frames its own responses (status line and reason as the upstream sent them, chunked bodies,
// keep-alive).
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
