// SPDX-License-Identifier: GPL-3.0-or-later
#include "routing/requestrouter.h"

#include "body/bodyedits.h"
#include "body/bodyscanner.h"
#include "body/modelid.h"
#include "body/modellocator.h"
#include "body/multipartscanner.h"
#include "debugcatalog.h"
#include "forward/forwardexchange.h"
#include "forward/forwardheaders.h"
#include "forward/forwardplan.h"
#include "forward/routehealth.h"
#include "forward/tunnelexchange.h"
#include "http/requesthead.h"
#include "http/responsewriter.h"
#include "observe/logging.h"
#include "observe/metrics.h"
#include "observe/requestid.h"
#include "routing/routetable.h"
#include "wire/upgradetarget.h"

#include <QUrlQuery>

#include <atomic>
#include <chrono>
#include <iterator>

namespace slp {

RequestRouter::RequestRouter(std::shared_ptr<const RouteTable> table,
                             const ExchangeContext &context, RouterOptions options)
    : m_table(std::move(table)), m_context(context), m_options(options)
{
    m_context.logRequests = m_options.logRequests;
}

void RequestRouter::setOptions(const RouterOptions &options)
{
    m_options = options;
    m_context.logRequests = options.logRequests;
}

void RequestRouter::refuseUnrouted(ResponseWriter *writer, int status, const QString &message,
                                   const QByteArray &code)
{
    m_metrics.add(metric::requestsTotal, metric::requestLabels(metric::unknownModel, status));
    answerError(writer, status, message, code, QStringLiteral("model"));
}

void RequestRouter::refuseUnknownModel(ResponseWriter *writer, const QString &id)
{
    refuseUnrouted(writer, 404,
                   QStringLiteral("The model `%1` does not exist: GET /v1/models lists the "
                                  "models served here")
                       .arg(id.left(256)),
                   "model_not_found");
}

void RequestRouter::answerError(ResponseWriter *writer, int status, const QString &message,
                                const QByteArray &code, const QString &param)
{
    writer->respondError(status, message, newRequestId(), code, param);
}

Catalog RequestRouter::catalogWithHealth() const
{
    Catalog catalog = m_table->catalog(m_options.startedAt);
    for (CatalogEntry &entry : catalog.entries)
        addHealth(entry);
    return catalog;
}

void RequestRouter::addHealth(CatalogEntry &entry) const
{
    if (!m_context.health)
        return;
    entry.state = routeStateName(m_context.health->state(entry.id));
    entry.lastFailure = m_context.health->lastFailure(entry.id);
}

// One resource SLP answers or routes: a path (exact, or a prefix ending in '/'), a method, and
// the handler. The first entry whose path matches names the resource; its entries list the
// methods it takes (a WebSocket upgrade is a GET that asks for one).
struct RequestRouter::Endpoint
{
    QByteArrayView path;
    bool prefix = false;
    QByteArrayView method;
    bool upgrade = false;
    Handler handler = nullptr;
};

const RequestRouter::Endpoint *RequestRouter::endpointFor(const QByteArray &method,
                                                          const QByteArray &path, bool upgrade,
                                                          QByteArray *allowed)
{
    static const Endpoint kEndpoints[] = {
        {"/healthz", false, "GET", false, &RequestRouter::serveHealth},
        {"/metrics", false, "GET", false, &RequestRouter::serveMetrics},
        {"/v1/models", false, "GET", false, &RequestRouter::serveCatalog},
        {"/v1/models/", false, "GET", false, &RequestRouter::serveCatalog},
        {"/v1/models/", true, "GET", false, &RequestRouter::serveModel},
        // llama.cpp's spelling, which many tools ask first: the same answers.
        {"/models", false, "GET", false, &RequestRouter::serveCatalog},
        {"/models/", false, "GET", false, &RequestRouter::serveCatalog},
        {"/models/", true, "GET", false, &RequestRouter::serveModel},
        // A stored response is read by its id alone: no model says which backend holds it.
        {"/v1/responses/", true, "GET", false, &RequestRouter::refuseStoredResponse},
        {"/v1/responses/", true, "DELETE", false, &RequestRouter::refuseStoredResponse},
        {"/v1/responses/", true, "POST", false, &RequestRouter::forward},
        {"/v1/", true, "GET", true, &RequestRouter::tunnel},
        {"/v1/", true, "POST", false, &RequestRouter::forward},
        // Any other POST is routed by its model the same way: vLLM's /tokenize, /v2/rerank,
        // /score, /pooling and whatever a backend adds outside /v1/.
        {"/", true, "POST", false, &RequestRouter::forward},
    };
    const Endpoint *resource = nullptr;
    const auto sameResource = [&](const Endpoint &e) {
        return e.path == resource->path && e.prefix == resource->prefix;
    };
    for (const Endpoint &e : kEndpoints) {
        if (e.prefix ? !path.startsWith(e.path) : path != e.path)
            continue;
        if (!resource)
            resource = &e;
        else if (!sameResource(e))
            break; // the first resource that matches decides
        if (e.method == method && (!e.upgrade || upgrade))
            return &e;
    }
    // The 405 lists what the resource answers; built here, so a match allocates nothing.
    for (const Endpoint *e = resource; e && e != std::end(kEndpoints) && sameResource(*e); ++e) {
        if (!allowed->isEmpty())
            *allowed += ", ";
        *allowed +=
            e->upgrade ? QByteArrayLiteral("GET (a WebSocket upgrade)") : e->method.toByteArray();
    }
    return nullptr;
}

std::unique_ptr<ModelLocator> RequestRouter::scanFor(const RequestHead &head)
{
    QByteArray allowed;
    const qsizetype question = head.target.indexOf('?');
    const QByteArray path = question < 0 ? head.target : head.target.left(question);
    const Endpoint *e = endpointFor(head.method, path, head.webSocketUpgrade, &allowed);
    if (!e || e->handler != &RequestRouter::forward)
        return nullptr;
    return std::make_unique<ModelLocator>(head.headers);
}

void RequestRouter::handle(InboundRequest request, ResponseWriter *writer)
{
    QByteArray allowed;
    if (const Endpoint *e =
            endpointFor(request.method, request.path, request.webSocketUpgrade, &allowed))
        return (this->*(e->handler))(request, writer);
    const QString path = QString::fromUtf8(request.path).left(200);
    if (!allowed.isEmpty()) {
        return answerError(
            writer, 405,
            QStringLiteral("%1 is not allowed on %2: it answers %3")
                .arg(QString::fromLatin1(request.method), path, QString::fromLatin1(allowed)));
    }
    answerError(writer, 404,
                QStringLiteral("no such endpoint: %1 (SLP routes any POST by its model, and "
                               "answers GET /v1/models, /healthz and /metrics; docs/HTTP.md)")
                    .arg(path));
}

void RequestRouter::refuseStoredResponse(InboundRequest &request, ResponseWriter *writer)
{
    answerError(
        writer, 404,
        QStringLiteral("%1 %2: SLP routes each request by its model, and a stored "
                       "response is named by its id alone, so SLP cannot tell which "
                       "backend holds it. Ask that backend directly, or keep the "
                       "conversation in the request (docs/HTTP.md, \"Stored responses\")")
            .arg(QString::fromLatin1(request.method), QString::fromUtf8(request.path.left(200))),
        "not_found");
}

void RequestRouter::serveHealth(InboundRequest &, ResponseWriter *writer)
{
    writer->respond(200, "text/plain; charset=utf-8", "ok\n", newRequestId());
}

void RequestRouter::serveMetrics(InboundRequest &, ResponseWriter *writer)
{
    writer->respond(200, "text/plain; version=0.0.4; charset=utf-8", m_metrics.render(),
                    newRequestId());
}

namespace {
bool asksDebug(const QByteArray &query)
{
    const QUrlQuery params(QString::fromUtf8(query));
    return debugRequested(params.hasQueryItem(QStringLiteral("debug")),
                          params.queryItemValue(QStringLiteral("debug"), QUrl::FullyDecoded));
}
} // namespace

void RequestRouter::serveCatalog(InboundRequest &request, ResponseWriter *writer)
{
    writer->respond(200, "application/json",
                    catalogToJson(catalogWithHealth(), asksDebug(request.query)), newRequestId());
}

void RequestRouter::serveModel(InboundRequest &request, ResponseWriter *writer)
{
    const QByteArray &path = request.path;
    const QString id = QUrl::fromPercentEncoding(path.mid(path.indexOf("models/") + 7));
    const qsizetype index = m_table->find(id);
    if (index < 0) {
        return answerError(writer, 404, QStringLiteral("The model `%1` does not exist").arg(id),
                           "model_not_found", QStringLiteral("model"));
    }
    // The object OpenAI's retrieve-model endpoint returns: the catalog's entry, the same.
    CatalogEntry entry = m_table->catalogEntry(index);
    addHealth(entry);
    writer->respond(200, "application/json",
                    catalogEntryToJson(entry, m_options.startedAt, asksDebug(request.query)) + '\n',
                    newRequestId());
}

void RequestRouter::forward(InboundRequest &request, ResponseWriter *writer)
{
    QElapsedTimer received; // slp_overhead_seconds starts here: the request is complete
    received.start();
    // max_body_bytes was enforced where the body was read (RequestFramer): a larger one never
    // gets here.
    // 1. read the model id: one pass, no document built; where depends on the media type.
    // Mostly read already: the connection showed each read to the scan it made (scanFor).
    const ModelLocation scan = request.modelScan
                                   ? request.modelScan->finish(request.body)
                                   : ModelLocation::locate(request.headers, request.body);
    if (scan.status() != 0) {
        return refuseUnrouted(writer, scan.status(), scan.error(),
                              scan.status() == 415 ? "unsupported_media_type"
                                                   : "invalid_request_body");
    }

    // 2. look it up.
    const qsizetype index = m_table->find(scan.model());
    if (index < 0)
        return refuseUnknownModel(writer, scan.model());

    if (const QString bad = scan.renameError(m_table->upstreamModel(index)); !bad.isEmpty())
        return refuseUnrouted(writer, 400, bad, "invalid_request_body");

    // 3. the plan: the route's settings by reference, the request's own parts moved in.
    ForwardPlan plan = planFor(index, scan, request);
    plan.received = received;

    // 4. forward.
    auto *exchange = new ForwardExchange(std::move(plan), m_context, writer); // owned by writer
    exchange->start();
}

void RequestRouter::tunnel(InboundRequest &request, ResponseWriter *writer)
{
    const auto refuse = [&](const QString &message) {
        refuseUnrouted(writer, 400, message, "invalid_request");
    };
    const UpgradeModel model = findUpgradeModel(request.target);
    if (!model.error.isEmpty())
        return refuse(model.error);
    if (!model.found) {
        return refuse(QStringLiteral("WebSocket upgrade has no model query parameter: "
                                     "add ?model=ID to the URL (GET /v1/models lists them)"));
    }
    // The rules of the JSON key and the multipart part.
    if (const QString bad = modelIdError(model.id, QStringLiteral("the model query parameter"));
        !bad.isEmpty())
        return refuse(bad);
    const QString id = QString::fromUtf8(model.id);
    const qsizetype index = m_table->find(id);
    if (index < 0)
        return refuseUnknownModel(writer, id);
    ForwardPlan plan = basePlan(index, request);
    // Rename: only the parameter's value changes; the rest of the target stays verbatim.
    const QString upstreamModel = m_table->upstreamModel(index);
    if (!upstreamModel.isEmpty() && upstreamModel != id) {
        plan.renamedTo = upstreamModel;
        plan.request.target = renameUpgradeModel(request.target, model, upstreamModel.toUtf8());
    }
    // The one case where hop-by-hop headers pass: the upgrade itself.
    plan.request.headers.append({QByteArrayLiteral("Connection"), QByteArrayLiteral("Upgrade")});
    plan.request.headers.append(
        {QByteArrayLiteral("Upgrade"), headerValue(request.headers, "upgrade")});
    auto *exchange = new TunnelExchange(std::move(plan), m_context, writer); // owned by writer
    exchange->start();
}

ForwardPlan RequestRouter::basePlan(qsizetype index, InboundRequest &request) const
{
    ForwardPlan plan;
    plan.route = m_table->forwarding(index);
    plan.requestId = newRequestId();
    plan.traceId = traceIdOf(request.headers);
    InboundHeaders headers = prepareUpstreamHeaders(request.headers, request.clientAddress);
    if (headers.hasClientRequestId) {
        plan.clientRequestId = headers.clientRequestId;
        noteIgnoredClientId(plan);
    }
    plan.request.method = request.method;
    plan.request.origin = plan.route->origin;
    plan.request.originUrl = plan.route->originUrl;
    plan.request.target = request.target; // verbatim, for transports that can send it so
    plan.request.headers = std::move(headers.forward);
    replaceHeaders(plan.request.headers, plan.route->setHeaders);
    return plan;
}

ForwardPlan RequestRouter::planFor(qsizetype index, const ModelLocation &scan,
                                   InboundRequest &request) const
{
    ForwardPlan plan = basePlan(index, request);

    // Rename: only the bytes of the model value change.
    const QString upstreamModel = m_table->upstreamModel(index);
    const bool rename = !upstreamModel.isEmpty() && upstreamModel != scan.model();
    plan.renamedTo = rename ? upstreamModel : QString();
    plan.aggregate = wantsAggregate(m_table->route(index).aggregate, request.path, scan);
    QList<ByteEdit> edits;
    if (plan.aggregate != ForwardPlan::Aggregate::Off) {
        edits = jsonStreamTrueEdits(scan.json(), plan.renamedTo);
        if (edits.isEmpty()) // a compound "stream" value: not SLP's to set, so no aggregating
            plan.aggregate = ForwardPlan::Aggregate::Off;
        else
            plan.maxAnswerBytes = m_options.maxAnswerBytes;
    }
    if (plan.aggregate == ForwardPlan::Aggregate::Off && rename)
        edits = scan.renameEdits(upstreamModel);
    // The client's bytes go out shared: a renamed body is its block seen through two slices
    // plus the new value, never a renamed copy.
    plan.request.body = ByteChain::edited(request.body, edits);
    return plan;
}

ForwardPlan::Aggregate RequestRouter::wantsAggregate(bool routeAggregates, const QByteArray &path,
                                                     const ModelLocation &scan)
{
    // A non-streaming chat/completions request on an aggregate route goes upstream with
    // "stream": true, so the route timeout bounds time to first token; the logprobs family
    // stays as asked (its streamed shape differs).
    const bool chat = path == "/v1/chat/completions";
    if (!routeAggregates || !(chat || path == "/v1/completions") ||
        scan.kind() != ModelLocation::Kind::Json || scan.json().stream == BodyScan::Stream::True ||
        scan.json().wantsLogprobs)
        return ForwardPlan::Aggregate::Off;
    return chat ? ForwardPlan::Aggregate::Chat : ForwardPlan::Aggregate::Completion;
}

// Once per process, whichever worker thread sees the first client id.
void RequestRouter::noteIgnoredClientId(const ForwardPlan &plan)
{
    static std::atomic_bool logged{false};
    if (logged.exchange(true))
        return;
    qCInfo(lcProxy).noquote()
        << QStringLiteral("[%1] ignoring inbound X-Request-Id %2: SLP always mints its own ids "
                          "(an untrusted id buys no correlation across the hop); the client's "
                          "value is logged as client=\"...\" from now on")
               .arg(QString::fromLatin1(plan.requestId), quoteForLog(plan.clientRequestId));
}

} // namespace slp
