#pragma once

#include <QAbstractHttpServer>

#include <functional>

namespace slp {

struct InboundRequest;
class ResponseSlot;

// The QtHttpServer front: turns each parsed request into an InboundRequest (SLP's own strict
// head when it has one, Qt's view otherwise), opens its slot in the connection's response
// queue and hands both on. It never writes through QHttpServerResponder: SLP frames its own
// responses (status line and reason as the upstream sent them, chunked bodies, keep-alive).
class HttpFront : public QAbstractHttpServer
{
    Q_OBJECT
public:
    using Handler = std::function<void(InboundRequest, ResponseSlot *)>;
    explicit HttpFront(Handler handler, QObject *parent = nullptr);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    Handler m_handler;
};

} // namespace slp
