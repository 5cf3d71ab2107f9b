// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "forward/exchangecontext.h"
#include "forward/forwardplan.h"
#include "http/requesthandler.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace slp {

struct Catalog;
struct CatalogEntry;
class RouteTable;
class ModelLocation;

// The router's settings that a reload may change (the worker-wide parts are its
// ExchangeContext).
struct RouterOptions
{
    bool logRequests = false;
    // max_body_bytes: the framer refuses larger request bodies; here it bounds the answer an
    // aggregate route reassembles, which is buffered like a request body.
    qint64 maxAnswerBytes = 64ll << 20;
    qint64 startedAt = 0; // unix seconds, the catalog's "created"
};

// The request path in one screen: one lookup in the endpoint table (qBittorrent's
// registerAPIController, Caddy's route list: path or prefix, method, handler), then the
// handler. SLP's own endpoints answer from the route table; a request routed by its model has
// it read, looked up, renamed if the route says so, and handed to a ForwardExchange (a
// WebSocket upgrade: the `model` query parameter and a TunnelExchange).
class RequestRouter : public RequestHandler
{
public:
    // `context`: the worker's parts every exchange shares (its logRequests is options').
    RequestRouter(std::shared_ptr<const RouteTable> table, const ExchangeContext &context,
                  RouterOptions options);

    // A snapshot: the daemon publishes a new one after a reload or a discovery probe, and the
    // requests already under way keep what they copied from the old one.
    void setTable(std::shared_ptr<const RouteTable> table) { m_table = std::move(table); }
    void setOptions(const RouterOptions &options);
    void handle(InboundRequest request, ResponseWriter *writer) override;

    // The connection's model scan for a request whose head was just read: one for a request
    // the endpoint table routes by its body's model, none for the others (ModelScanFactory).
    static std::unique_ptr<ModelLocator> scanFor(const RequestHead &head);

private:
    using Handler = void (RequestRouter::*)(InboundRequest &request, ResponseWriter *writer);
    struct Endpoint;
    static const Endpoint *endpointFor(const QByteArray &method, const QByteArray &path,
                                       bool upgrade, QByteArray *allowed);

    void serveHealth(InboundRequest &request, ResponseWriter *writer);
    void serveMetrics(InboundRequest &request, ResponseWriter *writer);
    void serveCatalog(InboundRequest &request, ResponseWriter *writer);
    void serveModel(InboundRequest &request, ResponseWriter *writer);
    // GET or DELETE /v1/responses/{id}: no model to route by (a 404 that says what to do).
    void refuseStoredResponse(InboundRequest &request, ResponseWriter *writer);
    // A request routed by its body's model.
    void forward(InboundRequest &request, ResponseWriter *writer);
    // A WebSocket upgrade: routed by its `model` query parameter.
    void tunnel(InboundRequest &request, ResponseWriter *writer);

    // What both kinds of request share once the route is known: ids, trace, headers.
    ForwardPlan basePlan(qsizetype index, InboundRequest &request) const;
    Catalog catalogWithHealth() const;
    // An entry's passive state and last failure, as every worker's exchanges reported them.
    void addHealth(CatalogEntry &entry) const;
    ForwardPlan planFor(qsizetype index, const ModelLocation &scan, InboundRequest &request) const;
    static void noteIgnoredClientId(const ForwardPlan &plan);
    // Whether the answer is reassembled from a stream (aggregate: true routes), and as what.
    static ForwardPlan::Aggregate wantsAggregate(bool routeAggregates, const QByteArray &path,
                                                 const ModelLocation &scan);
    // A request no route takes: counted under model_id="unknown", answered `status` (param
    // "model"); the 404 for an id no route serves.
    void refuseUnrouted(ResponseWriter *writer, int status, const QString &message,
                        const QByteArray &code);
    void refuseUnknownModel(ResponseWriter *writer, const QString &id);
    void answerError(ResponseWriter *writer, int status, const QString &message,
                     const QByteArray &code = {}, const QString &param = {});

    std::shared_ptr<const RouteTable> m_table;
    ExchangeContext m_context; // held here; every exchange refers to it
    MetricsRegistry &m_metrics{m_context.metrics};
    RouterOptions m_options;
};

} // namespace slp
