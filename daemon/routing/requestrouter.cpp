// SPDX-License-Identifier: GPL-3.0-or-later
#include "routing/requestrouter.h"

#include "body/bodyedits.h"
#include "body/bodyscanner.h"
#include "body/jsontext.h"
#include "body/multipartscanner.h"
#include "debugcatalog.h"
#include "forward/forwardexchange.h"
#include "forward/forwardheaders.h"
#include "forward/forwardplan.h"
#include "forward/routehealth.h"
#include "forward/tunnelexchange.h"
#include "http/responsewriter.h"
#include "observe/logging.h"
#include "observe/metrics.h"
#include "observe/requestid.h"
#include "routing/modellocator.h"
#include "routing/routetable.h"
#include "wire/upgradetarget.h"

#include <QUrlQuery>

#include <atomic>
#include <chrono>

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
    // The table's catalog with each route's passive state and last failure, as every worker's
    // exchanges reported them.
    Catalog catalog = m_table->catalog(m_options.startedAt);
    if (!m_context.health)
        return catalog;
    for (CatalogEntry &entry : catalog.entries) {
        entry.state = routeStateName(m_context.health->state(entry.id));
        entry.lastFailure = m_context.health->lastFailure(entry.id);
    }
    return catalog;
}

void RequestRouter::handle(InboundRequest request, ResponseWriter *writer)
{
    const QByteArray &path = request.path;
    const QByteArray &query = request.query;
    const bool get = request.method == "GET";

    if (path == "/healthz") {
        return get ? writer->respond(200, "text/plain; charset=utf-8", "ok\n", newRequestId())
                   : answerError(writer, 405, QStringLiteral("/healthz answers GET only"));
    }
    if (path == "/metrics") {
        return get ? writer->respond(200, "text/plain; version=0.0.4; charset=utf-8",
                                     m_metrics.render(), newRequestId())
                   : answerError(writer, 405, QStringLiteral("/metrics answers GET only"));
    }
    if (path == "/v1/models" || path == "/v1/models/") {
        if (!get)
            return answerError(writer, 405, QStringLiteral("/v1/models answers GET only"));
        const QUrlQuery params(QString::fromUtf8(query));
        const bool debug =
            debugRequested(params.hasQueryItem(QStringLiteral("debug")),
                           params.queryItemValue(QStringLiteral("debug"), QUrl::FullyDecoded));
        return writer->respond(200, "application/json", catalogToJson(catalogWithHealth(), debug),
                               newRequestId());
    }
    if (path.startsWith("/v1/models/") && get) {
        const QString id = QUrl::fromPercentEncoding(path.mid(11));
        const qsizetype index = m_table->find(id);
        if (index < 0) {
            return answerError(writer, 404, QStringLiteral("The model `%1` does not exist").arg(id),
                               "model_not_found", QStringLiteral("model"));
        }
        // The object OpenAI's retrieve-model endpoint returns.
        return writer->respond(
            200, "application/json",
            catalogEntryToJson(m_table->catalogEntry(index), m_options.startedAt) + '\n',
            newRequestId());
    }
    if (path.startsWith("/v1/")) {
        if (request.webSocketUpgrade)
            return tunnel(request, writer);
        if (request.method != "POST") {
            return answerError(
                writer, 405,
                QStringLiteral("%1 is not allowed on %2: model requests are POSTs")
                    .arg(QString::fromLatin1(request.method), QString::fromUtf8(path)));
        }
        return forward(request, writer);
    }
    answerError(writer, 404,
                QStringLiteral("no such endpoint: %1 (SLP serves POST /v1/..., GET /v1/models, "
                               "/healthz, /metrics)")
                    .arg(QString::fromUtf8(path).left(200)));
}

void RequestRouter::forward(InboundRequest &request, ResponseWriter *writer)
{
    QElapsedTimer received; // slp_overhead_seconds starts here: the request is complete
    received.start();
    // max_body_bytes was enforced where the body was read (RequestFramer): a larger one never
    // gets here.
    // 1. read the model id: one pass, no document built; where depends on the media type.
    // Mostly read already: the connection showed each read to the locator it made.
    auto *locator = dynamic_cast<ModelLocator *>(request.bodyWatch.get());
    const ModelLocation scan = locator ? locator->finish(request.body)
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
    if (!model.found) {
        return refuse(QStringLiteral("WebSocket upgrade has no model query parameter: "
                                     "add ?model=ID to the URL (GET /v1/models lists them)"));
    }
    // The rules of the JSON key and the multipart part.
    if (model.id.isEmpty())
        return refuse(QStringLiteral("WebSocket upgrade has an empty model query parameter"));
    if (model.id.size() > maxModelBytes) {
        return refuse(
            QStringLiteral("model query parameter is longer than %1 bytes").arg(maxModelBytes));
    }
    if (jsontext::firstInvalidUtf8(reinterpret_cast<const uchar *>(model.id.constData()), 0,
                                   model.id.size()) >= 0)
        return refuse(QStringLiteral("model query parameter is not valid UTF-8"));
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
