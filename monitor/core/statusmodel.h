// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"

#include <QHash>
#include <QList>
#include <QString>

#include <optional>

namespace slp::monitor {

// A change between two polls that someone may want to hear about.
struct Transition
{
    enum class Kind
    {
        Unreachable,     // SLP stopped answering (or was not answering at start-up)
        Reachable,       // it answers again
        BecameAmbiguous, // a route now serves from an ambiguous backend
        Recovered,       // an ambiguous route is no longer ambiguous
        StateChanged,    // any other change of a route's state (pending -> ok, ...)
        RouteAdded,      // SLP reloaded its config
        RouteRemoved,
        StartedFailing,  // the route is failing (an older SLP: consecutive failures >= 1)
        StoppedFailing,  // a failing or stalled route is ok again
        StartedStalling, // the route's answers break off mid-body
    };
    Kind kind = Kind::StateChanged;
    QString routeId;       // empty for Unreachable / Reachable
    QString upstreamModel; // the route's upstream name now (before, for RouteRemoved)
    RouteState from = RouteState::Ok;
    RouteState to = RouteState::Ok;
    bool atStartup = false; // found by the first poll rather than seen happening
    QString detail;         // Unreachable: the error
    int failures = 0;       // StartedFailing: attempts failed in a row
    // Started*: the condition entered and SLP's last failure (empty from an older SLP);
    // StoppedFailing: the condition left.
    RouteCondition condition = RouteCondition::Ok;
    bool conditionReported = false;
    QString what;
    QString requestId;

    bool operator==(const Transition &other) const = default;
};

QString describe(const Transition &transition); // one log line
// Started*: "connection refused (request id slpq...)"; "no failure reported" without one.
QString failureText(const Transition &transition);

struct StatusUpdate
{
    StatusSnapshot snapshot;
    QList<Transition> transitions;
    bool first = false; // the first poll since start (or since the URL changed)
};

// The pure state model: feeds on snapshots, remembers the last one, and says what changed.
// No widgets, no I/O, so every rule here is unit-tested on recorded daemon text.
//
// Start-up rule (Syncthing Tray's notifier): what the first poll finds is not news, except an
// alert: an ambiguous route or an unreachable SLP is reported as a transition at start-up.
// A failing or stalled route is attention, so one found at start-up only shows in the icon.
// A trouble episode starts when a route enters failing or stalled (entering the other one
// of the two is news too: a different trouble) and ends once the route has been ok for
// kRecoveryPolls polls in a row; slow in between neither ends it nor is news. So a route that
// fails, answers, fails again (a flapping one) is one episode, reported when it starts and
// when it ends; the icon and the route's line follow every poll.
//
// Traffic: each route's counters are compared with the last poll that reached SLP, giving
// the interval's requests per minute, failures, time-to-first-byte median and broken answers
// by reason; each interval is kept for an hour (history.h reads it for the window: the
// sparklines and the broken answers of the hour).
class StatusModel
{
public:
    StatusUpdate apply(StatusSnapshot snapshot);
    // Forget everything (the URL changed): the next poll is a start-up again.
    void reset();

    bool hasPolled() const { return m_current.has_value(); }
    const StatusSnapshot &current() const; // valid once hasPolled()

private:
    QList<Transition> routeTransitions(const QList<RouteStatus> &before,
                                       const QList<RouteStatus> &after) const;
    void measureTraffic(StatusSnapshot &snapshot);
    QList<Transition> failureTransitions(const QList<RouteStatus> &routes, bool startup);

    std::optional<StatusSnapshot> m_current;
    // The routes of the last poll that reached SLP: an outage is not a route change.
    std::optional<QList<RouteStatus>> m_lastKnownRoutes;
    QDateTime m_lastReachableAt;
    QList<TrafficPoint> m_history;
    // A route's trouble episode (see above), by model id.
    struct FailureEpisode
    {
        bool active = false;
        RouteCondition trouble = RouteCondition::Ok; // failing or stalled while active
        int healthyPolls = 0;
    };
    QHash<QString, FailureEpisode> m_episodes;
};

inline constexpr qint64 kHistorySeconds = 3600;
// The history's other bound: an hour of polls every 500 ms. A shorter interval keeps less
// than an hour rather than more memory.
inline constexpr qsizetype kMaxHistoryPoints = 7200;
inline constexpr int kRecoveryPolls = 2;

} // namespace slp::monitor
