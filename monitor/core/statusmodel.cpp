// SPDX-License-Identifier: GPL-3.0-or-later
#include "statusmodel.h"

#include <QHash>

namespace slp::monitor {

namespace {
// A transition of route `r`, named as it is now.
Transition aboutRoute(const RouteStatus &r, Transition::Kind kind = Transition::Kind::StateChanged)
{
    Transition t;
    t.kind = kind;
    t.routeId = r.entry.id;
    t.upstreamModel = r.entry.upstreamModel;
    return t;
}
} // namespace

QString failureText(const Transition &t)
{
    if (t.what.isEmpty())
        return QStringLiteral("no failure reported");
    if (t.requestId.isEmpty())
        return t.what;
    return QStringLiteral("%1 (request id %2)").arg(t.what, t.requestId);
}

QString describe(const Transition &t)
{
    const QString startup = t.atStartup ? QStringLiteral(" (at start-up)") : QString();
    switch (t.kind) {
    case Transition::Kind::Unreachable:
        return QStringLiteral("SLP unreachable%1: %2").arg(startup, t.detail);
    case Transition::Kind::Reachable:
        return QStringLiteral("SLP reachable again");
    case Transition::Kind::BecameAmbiguous:
        return QStringLiteral("route %1 became ambiguous%2 (upstream %3)")
            .arg(t.routeId, startup, t.upstreamModel);
    case Transition::Kind::Recovered:
        return QStringLiteral("route %1 recovered: %2 (upstream %3)")
            .arg(t.routeId, routeStateName(t.to), t.upstreamModel);
    case Transition::Kind::StateChanged:
        return QStringLiteral("route %1: %2 -> %3")
            .arg(t.routeId, routeStateName(t.from), routeStateName(t.to));
    case Transition::Kind::RouteAdded:
        return QStringLiteral("route %1 added (%2)").arg(t.routeId, routeStateName(t.to));
    case Transition::Kind::RouteRemoved:
        return QStringLiteral("route %1 removed").arg(t.routeId);
    case Transition::Kind::StartedFailing:
        if (!t.conditionReported)
            return QStringLiteral("route %1: backend failing: %2 attempts in a row")
                .arg(t.routeId)
                .arg(t.failures);
        return QStringLiteral("route %1: failing: %2").arg(t.routeId, failureText(t));
    case Transition::Kind::StartedStalling:
        return QStringLiteral("route %1: stalled: %2").arg(t.routeId, failureText(t));
    case Transition::Kind::StoppedFailing:
        return QStringLiteral("route %1: backend answers again (was %2)")
            .arg(t.routeId, routeConditionName(t.condition));
    }
    return {};
}

const StatusSnapshot &StatusModel::current() const
{
    Q_ASSERT(m_current);
    return *m_current;
}

void StatusModel::reset()
{
    m_current.reset();
    m_lastKnownRoutes.reset();
    m_lastReachableAt = QDateTime();
    m_history.clear();
    m_episodes.clear();
}

QList<Transition> StatusModel::failureTransitions(const QList<RouteStatus> &routes, bool startup)
{
    QList<Transition> out;
    QHash<QString, FailureEpisode> next; // routes a reload removed are forgotten
    for (const RouteStatus &r : routes) {
        FailureEpisode episode = m_episodes.value(r.entry.id);
        Transition t = aboutRoute(r);
        t.from = t.to = r.state;
        t.failures = r.consecutiveFailures;
        t.conditionReported = r.conditionReported;
        if (r.entry.lastFailure) {
            t.what = r.entry.lastFailure->what;
            t.requestId = r.entry.lastFailure->requestId;
        }
        const bool trouble =
            r.condition == RouteCondition::Failing || r.condition == RouteCondition::Stalled;
        if (trouble) {
            episode.healthyPolls = 0;
            if (!episode.active || episode.trouble != r.condition) {
                episode.active = true;
                episode.trouble = r.condition;
                t.kind = r.condition == RouteCondition::Failing ? Transition::Kind::StartedFailing
                                                                : Transition::Kind::StartedStalling;
                t.condition = r.condition;
                if (!startup)
                    out << t;
            }
        } else if (r.condition == RouteCondition::Slow) {
            episode.healthyPolls = 0; // not ok yet, and not news
        } else if (episode.active && ++episode.healthyPolls >= kRecoveryPolls) {
            t.kind = Transition::Kind::StoppedFailing;
            t.condition = episode.trouble;
            episode = FailureEpisode{};
            out << t;
        }
        next.insert(r.entry.id, episode);
    }
    m_episodes = next;
    return out;
}

void StatusModel::measureTraffic(StatusSnapshot &snapshot)
{
    QHash<QString, const RouteStatus *> old;
    if (m_lastKnownRoutes)
        for (const RouteStatus &r : *m_lastKnownRoutes)
            old.insert(r.entry.id, &r);
    const double seconds = m_lastReachableAt.isValid() && snapshot.polledAt.isValid()
                               ? double(m_lastReachableAt.msecsTo(snapshot.polledAt)) / 1000.0
                               : 0.0;
    TrafficPoint point;
    point.at = snapshot.polledAt;
    bool measured = false;
    for (RouteStatus &r : snapshot.routes) {
        // A route a reload added has nothing to compare with until the next poll.
        const RouteStatus *prev = old.value(r.entry.id);
        r.traffic = prev ? trafficBetween(prev->counters, r.counters, seconds) : RouteTraffic{};
        measured = measured || r.traffic.measured;
        point.requests += r.traffic.requests;
        point.failed += r.traffic.failed;
        if (r.traffic.requests > 0 || r.traffic.ttfbP50 || !r.traffic.broken.isEmpty())
            point.routes.insert(r.entry.id, r.traffic);
    }
    if (measured)
        m_history << point;
    const QDateTime horizon = snapshot.polledAt.addSecs(-kHistorySeconds);
    while (!m_history.isEmpty() &&
           (m_history.first().at < horizon || m_history.size() > kMaxHistoryPoints))
        m_history.removeFirst();
    m_lastReachableAt = snapshot.polledAt;
}

StatusUpdate StatusModel::apply(StatusSnapshot snapshot)
{
    StatusUpdate update;
    update.first = !m_current.has_value();
    const bool wasReachable = m_current && m_current->reachable;

    if (!snapshot.reachable) {
        if (m_lastKnownRoutes)
            snapshot.routes = *m_lastKnownRoutes;
        snapshot.health = Health::Alert;
        // Reported once per outage: at start-up, or when a reachable SLP stops answering.
        if (update.first || wasReachable) {
            Transition t;
            t.kind = Transition::Kind::Unreachable;
            t.atStartup = update.first;
            t.detail = snapshot.error;
            update.transitions << t;
        }
    } else {
        if (!update.first && !wasReachable) {
            Transition t;
            t.kind = Transition::Kind::Reachable;
            update.transitions << t;
        }
        measureTraffic(snapshot);
        if (!m_lastKnownRoutes) {
            // The first routes ever seen: only an ambiguous one is worth a word.
            for (const RouteStatus &r : snapshot.routes) {
                if (r.state != RouteState::Ambiguous)
                    continue;
                Transition t = aboutRoute(r, Transition::Kind::BecameAmbiguous);
                t.to = r.state;
                t.atStartup = true;
                update.transitions << t;
            }
        } else {
            update.transitions << routeTransitions(*m_lastKnownRoutes, snapshot.routes);
        }
        update.transitions << failureTransitions(snapshot.routes, !m_lastKnownRoutes);
        m_lastKnownRoutes = snapshot.routes;
    }

    snapshot.history = m_history;
    m_current = snapshot;
    update.snapshot = std::move(snapshot);
    return update;
}

QList<Transition> StatusModel::routeTransitions(const QList<RouteStatus> &before,
                                                const QList<RouteStatus> &after) const
{
    QList<Transition> out;
    QHash<QString, const RouteStatus *> old;
    for (const RouteStatus &r : before)
        old.insert(r.entry.id, &r);

    for (const RouteStatus &r : after) {
        Transition t = aboutRoute(r);
        t.to = r.state;
        const RouteStatus *prev = old.take(r.entry.id);
        if (!prev) {
            // A reload added it; an ambiguous newcomer is as bad as a route turning ambiguous.
            t.kind = r.state == RouteState::Ambiguous ? Transition::Kind::BecameAmbiguous
                                                      : Transition::Kind::RouteAdded;
            out << t;
            continue;
        }
        t.from = prev->state;
        if (t.from == t.to)
            continue;
        if (t.to == RouteState::Ambiguous)
            t.kind = Transition::Kind::BecameAmbiguous;
        else if (t.from == RouteState::Ambiguous)
            t.kind = Transition::Kind::Recovered;
        else
            t.kind = Transition::Kind::StateChanged;
        out << t;
    }
    // Removed routes, in their old order.
    for (const RouteStatus &r : before) {
        if (!old.contains(r.entry.id))
            continue;
        Transition t = aboutRoute(r, Transition::Kind::RouteRemoved);
        t.from = r.state;
        out << t;
    }
    return out;
}

} // namespace slp::monitor
