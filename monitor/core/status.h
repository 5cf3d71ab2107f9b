// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "debugcatalog.h"
#include "traffic.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QUrl>

#include <optional>

namespace slp::monitor {

// What the icon shows. Ordered by severity so the worst route wins with std::max.
enum class Health
{
    Ok,
    Attention,
    Alert
};

// One route's state, worst first when several apply (an ambiguous route that also had a probe
// error is still ambiguous: that is the one that sends requests to a stale model). A failing
// backend is a separate fact (RouteStatus::failing): a route can be both.
enum class RouteState
{
    Ok,
    Pending,
    ProbeError,
    Ambiguous
};

// The route's passive state: SLP's own reading of its outcomes (the catalog's `state`,
// docs/METRICS.md "Route state"), apart from discovery. Worst last.
enum class RouteCondition
{
    Ok,
    Slow,    // the last response heads each took over half the route's timeout
    Stalled, // the last responses that started were cut mid-body
    Failing  // the last attempts failed before a response head
};

QString healthName(Health health);        // ok | attention | alert
QString routeStateName(RouteState state); // ok | pending | probe error | ambiguous
Health healthOf(RouteState state);
QString routeConditionName(RouteCondition condition); // ok | slow | stalled | failing
// The catalog's word; nullopt for an empty or unknown one.
std::optional<RouteCondition> routeConditionFrom(const QString &name);

// What the connector delivers for one poll: the raw bodies or why each request failed.
// Nothing is interpreted here, so the state model can be tested on recorded text alone.
struct PollResult
{
    QUrl baseUrl;
    QDateTime finishedAt;
    QByteArray catalogBody; // GET /v1/models?debug, when catalogError is empty
    QString catalogError;   // refused, timed out, HTTP 503, ...
    QByteArray metricsBody; // GET /metrics, when metricsError is empty
    QString metricsError;
};

struct RouteStatus
{
    CatalogEntry entry; // the debug catalog's row (upstream filled from metrics if absent)
    bool ambiguousMetric = false; // slp_upstream_model_ambiguous{model_id} == 1
    RouteState state = RouteState::Ok;
    // From /metrics: cumulative counters, and the two per-route gauges (0 when absent, as
    // from an SLP too old to have them).
    RouteCounters counters;
    int consecutiveFailures = 0; // slp_upstream_consecutive_failures
    double inflight = 0;         // slp_route_inflight_requests
    RouteTraffic traffic;        // since the previous poll; filled by StatusModel
    // The catalog's `state` when SLP reports one (conditionReported). From an SLP too old to
    // report it: failing while the failure gauge is >= 1, else ok.
    RouteCondition condition = RouteCondition::Ok;
    bool conditionReported = false;

    // The backend failed SLP's last attempt(s): attention, whatever the discovery state.
    bool failing() const { return condition == RouteCondition::Failing; }
    QString upstreamName() const; // the upstream model, or "(unknown)"
    bool operator==(const RouteStatus &other) const;
};

// The route's icon: its state's health, at least attention while its condition is not ok.
Health routeHealth(const RouteStatus &route);
// The condition the route's state cell shows an icon for (slow, stalled, failing); nullopt
// where the health icon says more (an ambiguous route) or all is ok.
std::optional<RouteCondition> shownCondition(const RouteStatus &route);

struct StatusSnapshot
{
    QUrl baseUrl;
    QDateTime polledAt;
    bool reachable = false;
    // Unreachable: why. Reachable: a lesser problem (metrics unreadable), else empty.
    QString error;
    // Reachable: this poll's routes. Unreachable: the last known ones (stale), so the window
    // keeps showing what SLP served and a recovery can be compared with it.
    QList<RouteStatus> routes;
    Health health = Health::Alert;
    // Requests per poll over the last hour, oldest first; filled by StatusModel.
    QList<TrafficPoint> history;

    int count(RouteState state) const;
    // Routes in `condition`; reported: only those whose SLP reported it (false: only those
    // read from the failure gauge of an older SLP).
    int count(RouteCondition condition, bool reported) const;
    int failingCount() const;
};

// Reads one poll through the shared parsers (debug catalog, Prometheus text). Pure.
// A catalog that is missing or not a catalog means SLP is unreachable (something else may be
// listening there); unreadable metrics only cost the ambiguity gauge and raise attention.
StatusSnapshot readSnapshot(const PollResult &poll);

// Route state from the catalog row and the gauge.
RouteState routeStateOf(const CatalogEntry &entry, bool ambiguousMetric);

} // namespace slp::monitor

Q_DECLARE_METATYPE(slp::monitor::PollResult)
