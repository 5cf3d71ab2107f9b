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

// The request path in one screen: SLP's own endpoints, then for a POST under /v1/ read the
// model id, look it up, rename if the route says so, and hand it to a ForwardExchange; for a
// WebSocket upgrade under /v1/ the same with the `model` query parameter and a
// TunnelExchange.
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

private:
    void forward(InboundRequest &request, ResponseWriter *writer);
    // A WebSocket upgrade under /v1/: routed by its `model` query parameter.
    void tunnel(InboundRequest &request, ResponseWriter *writer);
    // What both kinds of request share once the route is known: ids, trace, headers.
    ForwardPlan basePlan(qsizetype index, InboundRequest &request) const;
    Catalog catalogWithHealth() const;
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
