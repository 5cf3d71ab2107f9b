// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QMap>
#include <QPair>
#include <QString>

#include <optional>

namespace slp::monitor {

// A cumulative histogram as /metrics gives it: (le, count) with le ascending, +Inf last.
using Buckets = QList<QPair<double, double>>;

// One route's counters at one poll, cumulative since SLP started.
struct RouteCounters
{
    double requests = 0; // slp_requests_total, every code
    double failed = 0;   // the 5xx codes, whoever answered them (upstream or SLP's own 502)
    Buckets latency;     // slp_upstream_latency_seconds_bucket (time to the response head)
    // slp_responses_broken_total by reason (braced: older initialisers may leave it out)
    QMap<QString, double> broken{};

    bool operator==(const RouteCounters &other) const = default;
};

// What one route did between two polls.
struct RouteTraffic
{
    bool measured = false; // false until two polls of this route were seen
    double requests = 0;   // in the interval
    double failed = 0;     // in the interval
    double requestsPerMinute = 0;
    std::optional<double> ttfbP50; // seconds; none without a request in the interval
    QMap<QString, double> broken;  // answers cut short in the interval, by reason (none at 0)

    bool operator==(const RouteTraffic &other) const = default;
};

// One poll's worth of the hour's history: requests over every route in that interval, and
// what each route with something to show did (requests, a TTFB median, broken answers).
struct TrafficPoint
{
    QDateTime at;
    double requests = 0;
    double failed = 0;
    QHash<QString, RouteTraffic> routes; // by model id; idle routes are left out

    bool operator==(const TrafficPoint &other) const = default;
};

// How much a counter grew. A counter below its last value means SLP restarted (counters
// start at 0 again): what it counts now all happened since, as Prometheus' rate() reads it.
double counterIncrease(double before, double after);

// The per-interval histogram: after - before per bucket, or after alone when the total went
// down (a restart).
Buckets bucketIncrease(const Buckets &before, const Buckets &after);

// Prometheus' histogram_quantile: linear interpolation inside the bucket that holds the rank;
// the first bucket starts at 0; a rank in the +Inf bucket gives the highest finite bound.
// None for an empty histogram or a q outside [0, 1].
std::optional<double> histogramQuantile(double q, const Buckets &buckets);

RouteTraffic trafficBetween(const RouteCounters &before, const RouteCounters &after,
                            double seconds);

} // namespace slp::monitor
