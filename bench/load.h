// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "system.h"

#include <QByteArray>

#include <cmath>
#include <vector>

namespace slp::bench {

// A chat-completions POST head for ep; extra: more header lines, each ending in CRLF.
QByteArray requestHead(const Endpoint &ep, qint64 bodySize, const QByteArray &extra = {});

double percentile(std::vector<qint64> v, double p);

struct LoadStats
{
    qint64 ok = 0;
    qint64 bad = 0;
    std::vector<qint64> latNs;
    double secs = 0;
    double cpu = 0;     // proxy CPU seconds during the measured window
    double selfCpu = 0; // the generator's own
    qint64 peakRssKb = 0;

    void add(const LoadStats &o);
    double rps() const { return secs > 0 ? double(ok) / secs : 0; }
    double p50us() const { return percentile(latNs, 50) / 1e3; }
    double p99us() const { return percentile(latNs, 99) / 1e3; }
    double cpuUsPerReq() const { return ok > 0 ? cpu * 1e6 / double(ok) : std::nan(""); }
};

struct LoadSpec
{
    Endpoint ep;
    QByteArray head;
    QByteArray body;
    int conc = 1;
    int warmupMs = 0;
    int durationMs = 2000;
    qint64 maxRequests = -1; // count-bound instead of time-bound when > 0
};

// Closed loop: conc connections, each sends its next request as soon as the last answered.
LoadStats runLoad(const LoadSpec &spec, const ProcSet &proc);

struct StreamStats
{
    int streams = 0;
    int completed = 0; // every expected event and the stream's end arrived
    int stalled = 0;   // completed, but some gap exceeded interval + 100 ms
    int failed = 0;
    qint64 events = 0;
    std::vector<qint64> ttfeNs;
    std::vector<qint64> gapNs;
    qint64 maxGapNs = 0;
    double secs = 0;
    double cpu = 0;
    double selfCpu = 0;
    double upstreamCpu = 0; // the mock's, to tell its limits from the proxy's
    qint64 peakRssKb = 0;

    int clean() const { return completed - stalled; }
    double cpuUsPerEvent() const { return events > 0 ? cpu * 1e6 / double(events) : std::nan(""); }
};

// n streams of expectedEvents SSE events each, opened over rampMs.
StreamStats runStreams(const Endpoint &ep, int n, int expectedEvents, int intervalMs, int rampMs,
                       const ProcSet &proc, const ProcSet &upstream);

} // namespace slp::bench
