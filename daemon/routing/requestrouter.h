#pragma once

#include "upstream/upstreamtransport.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace slp {

class MetricsRegistry;
class ResponseSlot;
class RouteTable;

// A client request as SLP saw it, copied out of QtHttpServer's reused request object.
struct InboundRequest
{
    QByteArray method;
    QByteArray target;  // path and query exactly as sent
    HeaderList headers; // in order, repeats kept
    QByteArray body;
    QByteArray clientAddress;
    bool keepAlive = true;
    int versionMinor = 1;
};

struct RouterOptions
{
    bool logRequests = false;
    qint64 maxBodyBytes = 64ll << 20;
    qint64 startedAt = 0; // unix seconds, the catalog's "created"
};

// The request path in one screen: SLP's own endpoints, then for a POST under /v1/ read the
// model id, look it up, rename if the route says so, and hand it to a ForwardExchange.
class RequestRouter
{
public:
    RequestRouter(std::shared_ptr<const RouteTable> table, UpstreamTransport &transport,
                  MetricsRegistry &metrics, RouterOptions options);

    // A snapshot: the daemon publishes a new one after a reload or a discovery probe, and the
    // requests already under way keep what they copied from the old one.
    void setTable(std::shared_ptr<const RouteTable> table) { m_table = std::move(table); }
    void setOptions(const RouterOptions &options) { m_options = options; }
    void handle(InboundRequest request, ResponseSlot *slot);

private:
    void forward(InboundRequest &request, ResponseSlot *slot);
    void answer(ResponseSlot *slot, const QByteArray &response);
    void answerError(ResponseSlot *slot, int status, const QString &message,
                     const QByteArray &code = {}, const QString &param = {});

    std::shared_ptr<const RouteTable> m_table;
    UpstreamTransport &m_transport;
    MetricsRegistry &m_metrics;
    RouterOptions m_options;
};

} // namespace slp
