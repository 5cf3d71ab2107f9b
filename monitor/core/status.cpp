// SPDX-License-Identifier: GPL-3.0-or-later
#include "status.h"

#include "plaintext.h"
#include "prometheustext.h"

#include <QHash>

#include <algorithm>
#include <cmath>

namespace slp::monitor {

QString healthName(Health health)
{
    switch (health) {
    case Health::Ok:
        return QStringLiteral("ok");
    case Health::Attention:
        return QStringLiteral("attention");
    case Health::Alert:
        return QStringLiteral("alert");
    }
    return {};
}

QString routeStateName(RouteState state)
{
    switch (state) {
    case RouteState::Ok:
        return QStringLiteral("ok");
    case RouteState::Pending:
        return QStringLiteral("pending");
    case RouteState::ProbeError:
        return QStringLiteral("probe error");
    case RouteState::Ambiguous:
        return QStringLiteral("ambiguous");
    }
    return {};
}

Health healthOf(RouteState state)
{
    switch (state) {
    case RouteState::Ok:
        return Health::Ok;
    case RouteState::Pending:
    case RouteState::ProbeError:
        return Health::Attention;
    case RouteState::Ambiguous:
        return Health::Alert;
    }
    return Health::Alert;
}

QString routeConditionName(RouteCondition condition)
{
    switch (condition) {
    case RouteCondition::Ok:
        return QStringLiteral("ok");
    case RouteCondition::Slow:
        return QStringLiteral("slow");
    case RouteCondition::Stalled:
        return QStringLiteral("stalled");
    case RouteCondition::Failing:
        return QStringLiteral("failing");
    }
    return {};
}

std::optional<RouteCondition> routeConditionFrom(const QString &name)
{
    for (const RouteCondition c : {RouteCondition::Ok, RouteCondition::Slow,
                                   RouteCondition::Stalled, RouteCondition::Failing})
        if (name == routeConditionName(c))
            return c;
    return std::nullopt;
}

Health routeHealth(const RouteStatus &route)
{
    return std::max(healthOf(route.state),
                    route.condition != RouteCondition::Ok ? Health::Attention : Health::Ok);
}

std::optional<RouteCondition> shownCondition(const RouteStatus &route)
{
    if (route.condition == RouteCondition::Ok || healthOf(route.state) == Health::Alert)
        return std::nullopt;
    return route.condition;
}

QString RouteStatus::upstreamName() const
{
    return entry.upstreamModel.isEmpty() ? QStringLiteral("(unknown)") : entry.upstreamModel;
}

namespace {

bool sameFailure(const std::optional<RouteFailure> &a, const std::optional<RouteFailure> &b)
{
    if (!a || !b)
        return a.has_value() == b.has_value();
    return a->at == b->at && a->what == b->what && a->requestId == b->requestId;
}

} // namespace

bool RouteStatus::operator==(const RouteStatus &other) const
{
    const CatalogEntry &a = entry;
    const CatalogEntry &b = other.entry;
    return a.id == b.id && a.upstreamModel == b.upstreamModel && a.discovery == b.discovery &&
           a.lastProbe == b.lastProbe && a.lastProbeAt == b.lastProbeAt && a.timeout == b.timeout &&
           a.retry == b.retry && a.aggregate == b.aggregate && a.state == b.state &&
           sameFailure(a.lastFailure, b.lastFailure) && condition == other.condition &&
           conditionReported == other.conditionReported &&
           ambiguousMetric == other.ambiguousMetric && state == other.state &&
           counters == other.counters && consecutiveFailures == other.consecutiveFailures &&
           inflight == other.inflight && traffic == other.traffic;
}

int StatusSnapshot::failingCount() const
{
    return int(std::count_if(
        routes.cbegin(), routes.cend(), [](const RouteStatus &r) { return r.failing(); }));
}

int StatusSnapshot::count(RouteCondition condition, bool reported) const
{
    return int(std::count_if(
        routes.cbegin(), routes.cend(),
        [&](const RouteStatus &r) {
            return r.condition == condition && r.conditionReported == reported;
        }));
}

int StatusSnapshot::count(RouteState state) const
{
    return int(std::count_if(
        routes.cbegin(), routes.cend(),
        [state](const RouteStatus &r) { return r.state == state; }));
}

RouteState routeStateOf(const CatalogEntry &entry, bool ambiguousMetric)
{
    // Both sources count: the gauge exists only for probed backends, while an edition that
    // follows its backend shows the backend's last_probe in the catalog.
    if (ambiguousMetric || entry.lastProbe == QLatin1String("ambiguous"))
        return RouteState::Ambiguous;
    if (entry.lastProbe == QLatin1String("error"))
        return RouteState::ProbeError;
    if (entry.discovery == QLatin1String("pending"))
        return RouteState::Pending;
    return RouteState::Ok;
}

namespace {

// What /metrics says of each route, by model_id.
struct MetricsByRoute
{
    QHash<QString, bool> ambiguous;
    QHash<QString, QString> upstream;
    QHash<QString, RouteCounters> counters;
    QHash<QString, int> failures;
    QHash<QString, double> inflight;

    void take(const PromSample &sample);
};

void MetricsByRoute::take(const PromSample &sample)
{
    QString modelId, upstreamModel, code, le, reason;
    for (const auto &[key, value] : sample.labels)
        if (key == QLatin1String("model_id"))
            modelId = value;
        else if (key == QLatin1String("upstream_model"))
            upstreamModel = value;
        else if (key == QLatin1String("code"))
            code = value;
        else if (key == QLatin1String("le"))
            le = value;
        else if (key == QLatin1String("reason"))
            reason = value;
    if (modelId.isEmpty())
        return;
    if (sample.name == QLatin1String("slp_requests_total")) {
        RouteCounters &c = counters[modelId];
        c.requests += sample.value;
        if (code.size() == 3 && code.startsWith(QLatin1Char('5')))
            c.failed += sample.value;
    } else if (sample.name == QLatin1String("slp_upstream_latency_seconds_bucket")) {
        bool ok = false;
        const double bound = le == QLatin1String("+Inf") ? qInf() : le.toDouble(&ok);
        if (ok || std::isinf(bound))
            counters[modelId].latency.append({bound, sample.value});
    } else if (sample.name == QLatin1String("slp_responses_broken_total") && !reason.isEmpty()) {
        counters[modelId].broken[reason] += sample.value;
    } else if (sample.name == QLatin1String("slp_upstream_consecutive_failures")) {
        failures[modelId] = int(sample.value);
    } else if (sample.name == QLatin1String("slp_route_inflight_requests")) {
        inflight[modelId] = sample.value;
    } else if (sample.name == QLatin1String("slp_upstream_model_ambiguous")) {
        ambiguous[modelId] = sample.value == 1.0;
    } else if (sample.name == QLatin1String("slp_upstream_model_info") &&
               !upstreamModel.isEmpty()) {
        upstream[modelId] = upstreamModel;
    }
}

RouteStatus routeOf(const CatalogEntry &entry, const MetricsByRoute &m)
{
    RouteStatus route;
    route.entry = entry;
    if (route.entry.upstreamModel.isEmpty())
        route.entry.upstreamModel = m.upstream.value(entry.id);
    // A backend chose this name: every face shows it as literal text.
    route.entry.upstreamModel = displayText(route.entry.upstreamModel);
    route.ambiguousMetric = m.ambiguous.value(entry.id, false);
    route.state = routeStateOf(route.entry, route.ambiguousMetric);
    route.counters = m.counters.value(entry.id);
    std::sort(route.counters.latency.begin(), route.counters.latency.end());
    route.consecutiveFailures = m.failures.value(entry.id, 0);
    route.inflight = m.inflight.value(entry.id, 0);
    // What SLP says of a failure is shown as text; the request id came from a client.
    if (route.entry.lastFailure) {
        route.entry.lastFailure->what = displayText(route.entry.lastFailure->what);
        route.entry.lastFailure->requestId = displayText(route.entry.lastFailure->requestId);
    }
    if (const auto condition = routeConditionFrom(entry.state)) {
        route.condition = *condition;
        route.conditionReported = true;
    } else if (route.consecutiveFailures >= 1) {
        route.condition = RouteCondition::Failing; // an SLP too old to say
    }
    return route;
}

} // namespace

StatusSnapshot readSnapshot(const PollResult &poll)
{
    StatusSnapshot s;
    s.baseUrl = poll.baseUrl;
    s.polledAt = poll.finishedAt;
    if (!poll.catalogError.isEmpty()) {
        s.error = poll.catalogError;
        return s;
    }
    QString catalogError;
    const std::optional<Catalog> catalog = catalogFromJson(poll.catalogBody, &catalogError);
    if (!catalog) {
        s.error = QStringLiteral("/v1/models?debug is not an SLP catalog: %1").arg(catalogError);
        return s;
    }
    s.reachable = true;
    MetricsByRoute metrics;
    if (!poll.metricsError.isEmpty()) {
        s.error = QStringLiteral("/metrics: %1").arg(poll.metricsError);
    } else {
        const PromParseResult prom = parsePromText(poll.metricsBody);
        if (!prom.error.isEmpty())
            s.error = QStringLiteral("/metrics: %1").arg(prom.error);
        // Samples before a malformed line are still good; use them.
        for (const PromSample &sample : prom.samples)
            metrics.take(sample);
    }
    Health health = s.error.isEmpty() ? Health::Ok : Health::Attention;
    for (const CatalogEntry &entry : catalog->entries) {
        s.routes << routeOf(entry, metrics);
        health = std::max(health, routeHealth(s.routes.last()));
    }
    s.health = health;
    return s;
}

} // namespace slp::monitor
