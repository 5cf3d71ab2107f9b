// SPDX-License-Identifier: GPL-3.0-or-later
#include "history.h"

#include "statustext.h"

#include <algorithm>

namespace slp::monitor {

SparkSeries requestSeries(const QList<TrafficPoint> &history)
{
    SparkSeries s;
    double peak = 0;
    for (const TrafficPoint &p : history) {
        s.bars << SparkBar{p.requests, p.failed, true};
        peak = std::max(peak, p.requests);
    }
    s.label = history.isEmpty()
                  ? QStringLiteral("requests per poll, last hour: waiting for two polls")
                  : QStringLiteral("requests per poll, last hour (peak %1)").arg(qRound64(peak));
    return s;
}

SparkSeries ttfbSeries(const QList<TrafficPoint> &history, const QString &routeId)
{
    SparkSeries s;
    std::optional<double> peak;
    for (const TrafficPoint &p : history) {
        const auto it = p.routes.constFind(routeId);
        const std::optional<double> p50 = it == p.routes.cend() ? std::nullopt : it->ttfbP50;
        s.bars << SparkBar{p50.value_or(0), 0, p50.has_value()};
        if (p50)
            peak = std::max(peak.value_or(0), *p50);
    }
    s.label =
        peak ? QStringLiteral("TTFB p50 per poll, last hour (peak %1)").arg(formatSeconds(peak))
             : QStringLiteral("TTFB p50 per poll, last hour: no answer yet");
    return s;
}

QMap<QString, double> brokenByReason(const QList<TrafficPoint> &history, const QString &routeId)
{
    QMap<QString, double> out;
    const auto add = [&out](const RouteTraffic &t) {
        for (auto it = t.broken.cbegin(); it != t.broken.cend(); ++it)
            out[it.key()] += it.value();
    };
    for (const TrafficPoint &p : history) {
        if (routeId.isEmpty())
            for (const RouteTraffic &t : p.routes)
                add(t);
        else if (const auto it = p.routes.constFind(routeId); it != p.routes.cend())
            add(*it);
    }
    return out;
}

QString brokenText(const QMap<QString, double> &byReason)
{
    QList<QPair<QString, double>> sorted;
    for (auto it = byReason.cbegin(); it != byReason.cend(); ++it)
        if (it.value() > 0)
            sorted.append({it.key(), it.value()});
    if (sorted.isEmpty())
        return QStringLiteral("none");
    // Most first; a tie in the reasons' order, so the line does not shuffle between polls.
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto &a, const auto &b) { return a.second > b.second; });
    QStringList parts;
    for (const auto &[reason, n] : sorted)
        parts << QStringLiteral("%1 %2")
                     .arg(qRound64(n))
                     .arg(QString(reason).replace(QLatin1Char('_'), QLatin1Char(' ')));
    return parts.join(QStringLiteral(", "));
}

} // namespace slp::monitor
