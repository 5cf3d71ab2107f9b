// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"

#include <QDateTime>
#include <QList>
#include <QString>

namespace slp::monitor {

// The window's details pane, as text: what the route's state means and its last failure
// (the catalog's last_failure). Pure, so every sentence is unit-tested.
struct RouteDetails
{
    QString title;       // "phi-4 → microsoft/phi-4: failing"
    QString explanation; // what the state means
    bool hasFailure = false;
    QString failure;   // "connection refused"
    QString when;      // "2026-05-01 14:03:12 (4 min ago)", local time
    QString requestId; // the X-Request-Id the failed request's client got
};

// "just now" (under a minute, or a clock a little ahead), "1 min ago", "42 min ago",
// "3 h 5 min ago", "2 days ago".
QString agoText(qint64 seconds);

// `at` in local time, "yyyy-MM-dd HH:mm:ss", with agoText() from `now`.
QString whenText(const QDateTime &at, const QDateTime &now);

// What the pane shows for `route` at `now`.
RouteDetails routeDetails(const RouteStatus &route, const QDateTime &now);

// The id of the route the pane explains: the selected one while it exists; with none, the
// first route in the worst condition (failing, then stalled, then slow), so an open window
// explains the trouble at a glance; empty when every route is ok and none is selected.
QString routeToExplain(const QList<RouteStatus> &routes, const QString &selectedId);

} // namespace slp::monitor
