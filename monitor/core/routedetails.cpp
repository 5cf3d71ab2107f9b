// SPDX-License-Identifier: GPL-3.0-or-later
#include "routedetails.h"

#include "statustext.h"

namespace slp::monitor {

namespace {

QString explanationOf(const RouteStatus &route)
{
    switch (route.condition) {
    case RouteCondition::Ok:
        return QStringLiteral("SLP sees no trouble in the route's recent answers.");
    case RouteCondition::Slow:
        return QStringLiteral("Slow: the last response heads each took over half the "
                              "route's timeout (%1).")
            .arg(route.entry.timeout);
    case RouteCondition::Stalled:
        return QStringLiteral("Stalled: the last answers that started were cut off mid-body "
                              "(the backend went quiet or closed the connection).");
    case RouteCondition::Failing:
        if (!route.conditionReported)
            return QStringLiteral("Backend failing: SLP's last %1 attempt(s) failed before a "
                                  "response head; clients get 502.")
                .arg(route.consecutiveFailures);
        return QStringLiteral("Failing: the last attempts failed before a response head "
                              "(refused, reset, timed out); clients get 502.");
    }
    return {};
}

} // namespace

QString agoText(qint64 seconds)
{
    const qint64 minutes = seconds / 60;
    if (minutes < 1)
        return QStringLiteral("just now");
    if (minutes < 60)
        return QStringLiteral("%1 min ago").arg(minutes);
    const qint64 hours = minutes / 60;
    if (hours < 24) {
        const qint64 rest = minutes % 60;
        return rest == 0 ? QStringLiteral("%1 h ago").arg(hours)
                         : QStringLiteral("%1 h %2 min ago").arg(hours).arg(rest);
    }
    const qint64 days = hours / 24;
    return QStringLiteral("%1 day%2 ago").arg(days).arg(days == 1 ? "" : "s");
}

QString whenText(const QDateTime &at, const QDateTime &now)
{
    return QStringLiteral("%1 (%2)").arg(at.toLocalTime().toString(u"yyyy-MM-dd HH:mm:ss"),
                                         agoText(at.secsTo(now)));
}

RouteDetails routeDetails(const RouteStatus &route, const QDateTime &now)
{
    RouteDetails d;
    d.title = routeLine(route);
    d.explanation = explanationOf(route);
    if (!route.entry.lastFailure) {
        d.failure = QStringLiteral("No failed request since SLP started.");
        return d;
    }
    const RouteFailure &f = *route.entry.lastFailure;
    d.hasFailure = true;
    d.failure = f.what;
    d.when = whenText(f.at, now);
    d.requestId = f.requestId;
    return d;
}

QString routeToExplain(const QList<RouteStatus> &routes, const QString &selectedId)
{
    const RouteStatus *worst = nullptr;
    for (const RouteStatus &r : routes) {
        if (!selectedId.isEmpty() && r.entry.id == selectedId)
            return selectedId;
        if (r.condition != RouteCondition::Ok && (!worst || r.condition > worst->condition))
            worst = &r;
    }
    return worst ? worst->entry.id : QString();
}

} // namespace slp::monitor
