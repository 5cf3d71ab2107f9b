// SPDX-License-Identifier: GPL-3.0-or-later
#include "traffic.h"

#include <algorithm>
#include <cmath>

namespace slp::monitor {

double counterIncrease(double before, double after)
{
    return after < before ? after : after - before;
}

Buckets bucketIncrease(const Buckets &before, const Buckets &after)
{
    const double totalBefore = before.isEmpty() ? 0 : before.last().second;
    const double totalAfter = after.isEmpty() ? 0 : after.last().second;
    if (totalAfter < totalBefore)
        return after; // restarted: every observation is new
    Buckets out;
    out.reserve(after.size());
    for (const auto &[le, count] : after) {
        double old = 0;
        for (const auto &[oldLe, oldCount] : before) {
            if (oldLe == le) {
                old = oldCount;
                break;
            }
        }
        // A bucket cannot shrink without the total shrinking; clamp anyway.
        out.append({le, std::max(0.0, count - old)});
    }
    return out;
}

std::optional<double> histogramQuantile(double q, const Buckets &buckets)
{
    if (buckets.size() < 2 || !(q >= 0 && q <= 1) || !std::isinf(buckets.last().first))
        return std::nullopt;
    const double total = buckets.last().second;
    if (total <= 0)
        return std::nullopt;
    const double rank = q * total;
    qsizetype i = 0;
    while (i < buckets.size() - 1 && buckets[i].second < rank)
        ++i;
    if (i == buckets.size() - 1)
        return buckets[i - 1].first; // in +Inf: the highest bound is all that is known
    const double upper = buckets[i].first;
    double lower = 0;
    double below = 0;
    if (i > 0) {
        lower = buckets[i - 1].first;
        below = buckets[i - 1].second;
    } else if (upper <= 0) {
        return upper;
    }
    const double inBucket = buckets[i].second - below;
    if (inBucket <= 0)
        return upper;
    return lower + (upper - lower) * (rank - below) / inBucket;
}

RouteTraffic trafficBetween(const RouteCounters &before, const RouteCounters &after, double seconds)
{
    RouteTraffic t;
    if (!(seconds > 0))
        return t;
    t.measured = true;
    // Requests and failures reset together (one restart); read them as one counter pair so
    // a restart cannot make "failed" larger than "requests".
    const bool restarted = after.requests < before.requests || after.failed < before.failed;
    t.requests = restarted ? after.requests : after.requests - before.requests;
    t.failed = restarted ? after.failed : after.failed - before.failed;
    t.requestsPerMinute = t.requests * 60.0 / seconds;
    t.ttfbP50 = histogramQuantile(0.5, bucketIncrease(before.latency, after.latency));
    for (auto it = after.broken.cbegin(); it != after.broken.cend(); ++it) {
        const double n =
            restarted ? it.value() : counterIncrease(before.broken.value(it.key()), it.value());
        if (n > 0)
            t.broken.insert(it.key(), n);
    }
    return t;
}

} // namespace slp::monitor
