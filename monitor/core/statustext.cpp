// SPDX-License-Identifier: GPL-3.0-or-later
#include "statustext.h"

#include <algorithm>

namespace slp::monitor {

namespace {

qsizetype widestId(const QList<RouteStatus> &routes)
{
    qsizetype width = 0;
    for (const RouteStatus &r : routes)
        width = std::max(width, r.entry.id.size());
    return width;
}

} // namespace

QString headline(const StatusSnapshot &s)
{
    if (!s.reachable)
        return QStringLiteral("alert: SLP unreachable (%1)").arg(s.error);
    QStringList parts;
    const auto add = [&](int n, const QString &what) {
        if (n > 0)
            parts << QStringLiteral("%1 %2").arg(n).arg(what);
    };
    add(s.count(RouteState::Ambiguous), routeStateName(RouteState::Ambiguous));
    for (const RouteCondition c : {RouteCondition::Failing, RouteCondition::Stalled})
        add(s.count(c, true), routeConditionName(c));
    if (const int n = s.count(RouteCondition::Failing, false))
        parts << QStringLiteral("%1 backend%2 failing").arg(n).arg(n == 1 ? "" : "s");
    add(s.count(RouteState::ProbeError), routeStateName(RouteState::ProbeError));
    add(s.count(RouteState::Pending), routeStateName(RouteState::Pending));
    add(s.count(RouteCondition::Slow, true), routeConditionName(RouteCondition::Slow));
    if (!s.error.isEmpty())
        parts << s.error;
    if (parts.isEmpty())
        parts << QStringLiteral("%1 route%2")
                     .arg(s.routes.size())
                     .arg(s.routes.size() == 1 ? "" : "s");
    return QStringLiteral("%1: %2").arg(healthName(s.health), parts.join(QStringLiteral(", ")));
}

QString routeConditionText(const RouteStatus &route)
{
    if (route.condition == RouteCondition::Ok)
        return {};
    if (route.conditionReported)
        return routeConditionName(route.condition);
    return QStringLiteral("backend failing: %1 attempt%2 in a row")
        .arg(route.consecutiveFailures)
        .arg(route.consecutiveFailures == 1 ? "" : "s");
}

QString routeStateText(const RouteStatus &route)
{
    const QString condition = routeConditionText(route);
    if (condition.isEmpty())
        return routeStateName(route.state);
    return route.state == RouteState::Ok
               ? condition
               : QStringLiteral("%1, %2").arg(routeStateName(route.state), condition);
}

QString routeLine(const RouteStatus &route)
{
    return QStringLiteral("%1 \u2192 %2: %3")
        .arg(route.entry.id, route.upstreamName(), routeStateText(route));
}

QString formatContext(std::optional<qint64> tokens)
{
    if (!tokens)
        return QStringLiteral("\u2014");
    // Windows are powers of two, or multiples of 1024 tokens: 32768 reads as 32k.
    if (*tokens >= 1024 && *tokens % 1024 == 0)
        return QStringLiteral("%1k").arg(*tokens / 1024);
    return QString::number(*tokens);
}

QString formatPerMinute(const RouteTraffic &t)
{
    if (!t.measured)
        return QStringLiteral("\u2014");
    const double v = t.requestsPerMinute;
    if (v == 0)
        return QStringLiteral("0");
    return v < 10 ? QString::number(v, 'f', 1) : QString::number(qRound64(v));
}

QString formatSeconds(std::optional<double> seconds)
{
    if (!seconds)
        return QStringLiteral("\u2014");
    if (*seconds >= 1)
        return QStringLiteral("%1 s").arg(QString::number(*seconds, 'f', 2));
    return QStringLiteral("%1 ms").arg(QString::number(*seconds * 1000, 'f', *seconds < 0.01));
}

QString trafficHeadline(const StatusSnapshot &s)
{
    RouteTraffic total;
    double failed = 0;
    for (const RouteStatus &r : s.routes) {
        total.measured = total.measured || r.traffic.measured;
        total.requestsPerMinute += r.traffic.requestsPerMinute;
        failed += r.traffic.failed;
    }
    const QString routes =
        QStringLiteral("%1 route%2").arg(s.routes.size()).arg(s.routes.size() == 1 ? "" : "s");
    if (!s.reachable || !total.measured)
        return QStringLiteral("%1 \u00b7 \u2014 req/min \u00b7 \u2014 failed").arg(routes);
    return QStringLiteral("%1 \u00b7 %2 req/min \u00b7 %3 failed")
        .arg(routes, formatPerMinute(total))
        .arg(qRound64(failed));
}

QString totalsText(const RouteCounters &c)
{
    return QStringLiteral("%1 request%2, %3 failed")
        .arg(qRound64(c.requests))
        .arg(qRound64(c.requests) == 1 ? "" : "s")
        .arg(qRound64(c.failed));
}

QString tooltipText(const StatusSnapshot &s)
{
    QStringList lines{QStringLiteral("SLP %1").arg(s.baseUrl.toString()), headline(s),
                      trafficHeadline(s)};
    for (const RouteStatus &r : s.routes)
        lines << routeLine(r);
    return lines.join(QLatin1Char('\n'));
}

QString onceReport(const StatusSnapshot &s)
{
    QString out = QStringLiteral("SLP %1: %2\n").arg(s.baseUrl.toString(), headline(s));
    const qsizetype width = widestId(s.routes);
    qsizetype stateWidth = 11;
    qsizetype totalsWidth = 0;
    for (const RouteStatus &r : s.routes) {
        stateWidth = std::max(stateWidth, routeStateText(r).size());
        totalsWidth = std::max(totalsWidth, totalsText(r.counters).size());
    }
    for (const RouteStatus &r : s.routes) {
        const QString context = r.entry.contextLength
                                    ? QStringLiteral(", context %1").arg(*r.entry.contextLength)
                                    : QString();
        out +=
            QStringLiteral("  %1  %2  %3  %4 (%5%6)\n")
                .arg(r.entry.id.leftJustified(width), routeStateText(r).leftJustified(stateWidth),
                     totalsText(r.counters).leftJustified(totalsWidth), r.upstreamName(),
                     r.entry.discovery, context);
    }
    return out + failureReport(s);
}

QString failureReport(const StatusSnapshot &s)
{
    QString out;
    for (const RouteStatus &r : s.routes) {
        if (r.condition == RouteCondition::Ok)
            continue;
        if (out.isEmpty())
            out = QStringLiteral("routes not ok:\n");
        const std::optional<RouteFailure> &f = r.entry.lastFailure;
        const QString failure =
            !f ? QStringLiteral("no failure reported")
               : QStringLiteral("last failure %1: %2 (request id %3)")
                     .arg(f->at.toUTC().toString(u"yyyy-MM-dd'T'HH:mm:ss'Z'"), f->what,
                          f->requestId.isEmpty() ? QStringLiteral("none") : f->requestId);
        out += QStringLiteral("  %1: %2; %3\n").arg(r.entry.id, routeConditionText(r), failure);
    }
    return out;
}

int onceExitCode(Health health)
{
    switch (health) {
    case Health::Ok:
        return 0;
    case Health::Attention:
        return 1;
    case Health::Alert:
        return 2;
    }
    return 2;
}

QString mappingText(const QList<RouteStatus> &routes)
{
    QString out;
    const qsizetype width = widestId(routes);
    for (const RouteStatus &r : routes) {
        const QString upstream = r.entry.upstreamModel.isEmpty()
                                     ? QStringLiteral("(unknown)")
                                     : QStringLiteral("\"%1\"").arg(r.entry.upstreamModel);
        out += QStringLiteral("%1 -> %2 (%3, %4)\n")
                   .arg(r.entry.id.leftJustified(width), upstream, r.entry.discovery,
                        routeStateName(r.state));
    }
    return out;
}

} // namespace slp::monitor
