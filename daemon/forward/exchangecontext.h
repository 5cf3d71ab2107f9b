// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace slp {

class ExchangeCounter;
class MetricsRegistry;
class RouteHealthBoard;
class UpstreamTransport;

// What every exchange of one worker shares: the worker's transport, and what every worker
// reports to (the metrics registry, each route's health, the count a drain waits for) with
// the log policy. One per worker, held by its router; an exchange keeps a reference, never a
// copy of a part, and the router outlives its exchanges (a worker deletes its front first).
struct ExchangeContext
{
    UpstreamTransport &transport;
    MetricsRegistry &metrics;
    RouteHealthBoard *health = nullptr;   // the daemon's: each exchange reports its outcome
    ExchangeCounter *exchanges = nullptr; // the daemon's: each exchange counts itself (drain)
    bool logRequests = false;             // log_requests: a reload changes it for every line
};

} // namespace slp
