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
    const auto add = [&](RouteState state) {
        if (const int n = s.count(state))
            parts << QStringLiteral("%1 %2").arg(n).arg(routeStateName(state));
    };
    add(RouteState::Ambiguous);
    add(RouteState::ProbeError);
    add(RouteState::Pending);
    if (!s.error.isEmpty())
        parts << s.error;
    if (parts.isEmpty())
        parts << QStringLiteral("%1 route%2")
                     .arg(s.routes.size())
                     .arg(s.routes.size() == 1 ? "" : "s");
    return QStringLiteral("%1: %2").arg(healthName(s.health), parts.join(QStringLiteral(", ")));
}

QString routeLine(const RouteStatus &route)
{
    return QStringLiteral("%1 \u2192 %2: %3")
        .arg(route.entry.id, route.upstreamName(), routeStateName(route.state));
}

QString tooltipText(const StatusSnapshot &s)
{
    QStringList lines{QStringLiteral("SLP %1").arg(s.baseUrl.toString()), headline(s)};
    for (const RouteStatus &r : s.routes)
        lines << routeLine(r);
    return lines.join(QLatin1Char('\n'));
}

QString onceReport(const StatusSnapshot &s)
{
    QString out = QStringLiteral("SLP %1: %2\n").arg(s.baseUrl.toString(), headline(s));
    const qsizetype width = widestId(s.routes);
    for (const RouteStatus &r : s.routes) {
        out += QStringLiteral("  %1  %2  %3 (%4)\n")
                   .arg(r.entry.id.leftJustified(width), routeStateName(r.state).leftJustified(11),
                        r.upstreamName(), r.entry.discovery);
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
