// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "traffic.h"

#include <QList>
#include <QMap>
#include <QString>

namespace slp::monitor {

// The hour's history (StatusModel keeps it, one TrafficPoint per poll) read for the window:
// the sparklines' bars and the broken answers of the hour. Pure.

// One bar: `value` high, the `alarm` share of it in red; a missing bar is a gap (no request
// in that interval, so no median to show).
struct SparkBar
{
    double value = 0;
    double alarm = 0;
    bool present = true;

    bool operator==(const SparkBar &other) const = default;
};

// What a Sparkline paints: its bars, oldest first, and the line above them.
struct SparkSeries
{
    QList<SparkBar> bars;
    QString label;

    bool operator==(const SparkSeries &other) const = default;
};

// Requests per poll over every route (the failed share red): "requests per poll, last hour
// (peak 12)".
SparkSeries requestSeries(const QList<TrafficPoint> &history);

// The route's time-to-first-byte median per poll: "TTFB p50 per poll, last hour (peak 850 ms)".
SparkSeries ttfbSeries(const QList<TrafficPoint> &history, const QString &routeId);

// Broken answers by reason over the history: of one route, or of every route (routeId empty).
QMap<QString, double> brokenByReason(const QList<TrafficPoint> &history,
                                     const QString &routeId = {});

// "3 upstream closed, 1 idle timeout" (most first), "none".
QString brokenText(const QMap<QString, double> &byReason);

} // namespace slp::monitor
