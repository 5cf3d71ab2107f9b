// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "debugcatalog.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <chrono>
#include <mutex>
#include <optional>

namespace slp {

class MetricsRegistry;

// A route's passive state, from SLP's own outcomes only (never a request made to find out):
//   failing: the last kFailingAfter attempts failed before a response head (refused, reset,
//            timed out, a malformed head): clients get 502s;
//   stalled: the last kStalledAfter responses that started were cut mid-body (stream idle
//            timeout, or the upstream closed or reset the connection): the backend answers,
//            so it is alive, but it does not finish what it starts;
//   slow:    the last kSlowAfter response heads each took over half the route's timeout:
//            one more slowdown and requests time out;
//   ok:      none of these.
// Failing wins over stalled, stalled over slow. docs/METRICS.md says why each threshold.
enum class RouteState
{
    Ok,
    Slow,
    Failing,
    Stalled,
};
QString routeStateName(RouteState state); // "ok", "slow", "failing", "stalled"

// What one exchange tells its route, once, when it ends.
struct HealthReport
{
    int failedAttempts = 0; // attempts that failed before a response head, in order
    bool headArrived = false;
    std::chrono::milliseconds headLatency{0};
    enum class Body
    {
        None,      // no body relayed (no head, or an answer SLP built)
        Completed, // the response ended cleanly
        Cut,       // cut mid-body by the upstream or by stream_idle_timeout
        ClientLeft // the client left: says nothing of the backend
    };
    Body body = Body::None;
    std::optional<RouteFailure> failure; // this exchange's failure, as the route shows it
};

// One route's runs of outcomes. Pure.
class RouteHealth
{
public:
    static constexpr int kFailingAfter = 3;
    static constexpr int kStalledAfter = 3;
    static constexpr int kSlowAfter = 5;

    void record(const HealthReport &report, std::chrono::milliseconds routeTimeout);
    RouteState state() const;
    const std::optional<RouteFailure> &lastFailure() const { return m_lastFailure; }

private:
    int m_failedAttempts = 0; // in a row, before a head
    int m_cuts = 0;           // started responses cut, in a row
    int m_slowHeads = 0;      // heads over half the timeout, in a row
    std::optional<RouteFailure> m_lastFailure;
};

// Every route's RouteHealth, shared by the workers (thread-safe), published as
// slp_route_state{model_id,state} (1 for the current state, 0 for the others).
class RouteHealthBoard
{
public:
    explicit RouteHealthBoard(MetricsRegistry *metrics = nullptr) : m_metrics(metrics) {}

    void record(const QString &modelId, std::chrono::milliseconds routeTimeout,
                const HealthReport &report);
    RouteState state(const QString &modelId) const;
    std::optional<RouteFailure> lastFailure(const QString &modelId) const;
    // The routes of the table now serving: new ones start ok, gone ones are forgotten.
    void track(const QStringList &modelIds);

private:
    void publishLocked(const QString &modelId, RouteState state);

    mutable std::mutex m_mutex;
    QHash<QString, RouteHealth> m_routes;
    MetricsRegistry *m_metrics;
};

} // namespace slp
