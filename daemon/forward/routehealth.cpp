// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/routehealth.h"

#include "observe/metrics.h"

namespace slp {

namespace {
constexpr RouteState kAllStates[] = {RouteState::Ok, RouteState::Slow, RouteState::Failing,
                                     RouteState::Stalled};
} // namespace

QString routeStateName(RouteState state)
{
    switch (state) {
    case RouteState::Slow:
        return QStringLiteral("slow");
    case RouteState::Failing:
        return QStringLiteral("failing");
    case RouteState::Stalled:
        return QStringLiteral("stalled");
    case RouteState::Ok:
        break;
    }
    return QStringLiteral("ok");
}

void RouteHealth::record(const HealthReport &report, std::chrono::milliseconds routeTimeout)
{
    m_failedAttempts += report.failedAttempts;
    if (report.headArrived) {
        // Any head proves the backend answers: the run of failures ends.
        m_failedAttempts = 0;
        m_slowHeads = report.headLatency * 2 > routeTimeout ? m_slowHeads + 1 : 0;
    }
    if (report.body == HealthReport::Body::Completed)
        m_cuts = 0;
    else if (report.body == HealthReport::Body::Cut)
        ++m_cuts;
    if (report.failure)
        m_lastFailure = report.failure;
}

RouteState RouteHealth::state() const
{
    if (m_failedAttempts >= kFailingAfter)
        return RouteState::Failing;
    if (m_cuts >= kStalledAfter)
        return RouteState::Stalled;
    if (m_slowHeads >= kSlowAfter)
        return RouteState::Slow;
    return RouteState::Ok;
}

void RouteHealthBoard::record(const QString &modelId, std::chrono::milliseconds routeTimeout,
                              const HealthReport &report)
{
    std::lock_guard lock(m_mutex);
    RouteHealth &health = m_routes[modelId];
    const RouteState before = health.state();
    health.record(report, routeTimeout);
    if (health.state() != before)
        publishLocked(modelId, health.state());
}

RouteState RouteHealthBoard::state(const QString &modelId) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_routes.constFind(modelId);
    return it == m_routes.cend() ? RouteState::Ok : it->state();
}

std::optional<RouteFailure> RouteHealthBoard::lastFailure(const QString &modelId) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_routes.constFind(modelId);
    return it == m_routes.cend() ? std::nullopt : it->lastFailure();
}

void RouteHealthBoard::track(const QStringList &modelIds)
{
    std::lock_guard lock(m_mutex);
    for (auto it = m_routes.begin(); it != m_routes.end();) {
        if (modelIds.contains(it.key())) {
            ++it;
            continue;
        }
        if (m_metrics)
            m_metrics->removeMatching(metric::routeState, metric::modelLabels(it.key()));
        it = m_routes.erase(it);
    }
    for (const QString &id : modelIds) {
        if (!m_routes.contains(id)) {
            m_routes.insert(id, RouteHealth());
            publishLocked(id, RouteState::Ok);
        }
    }
}

void RouteHealthBoard::publishLocked(const QString &modelId, RouteState state)
{
    if (!m_metrics)
        return;
    for (const RouteState s : kAllStates) {
        m_metrics->set(
            metric::routeState,
            {{QStringLiteral("model_id"), modelId}, {QStringLiteral("state"), routeStateName(s)}},
            s == state ? 1 : 0);
    }
}

} // namespace slp
