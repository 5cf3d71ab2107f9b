// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "status.h"

#include <QString>
#include <QStringList>

namespace slp::monitor {

// The words every face uses (tray tooltip, menu, window, `--once`), written once.

// "alert: 1 ambiguous, 1 probe error" / "ok: 4 routes" / "alert: SLP unreachable (...)".
QString headline(const StatusSnapshot &snapshot);

// "ok", "ambiguous", "failing", "pending, stalled"; from an SLP that reports no route state,
// "backend failing: 3 attempts in a row".
QString routeStateText(const RouteStatus &route);
// The condition's part of it: "failing", "slow", ...; empty when ok.
QString routeConditionText(const RouteStatus &route);

// "qwen3-8b → Qwen/Qwen3-8B: ambiguous"
QString routeLine(const RouteStatus &route);

// "4 routes · 12 req/min · 0 failed": every route's requests per minute and failures (5xx)
// in the last interval, "—" until two polls were seen.
QString trafficHeadline(const StatusSnapshot &snapshot);

// "12", "0.5", "—" (not measured yet); and a duration in s/ms, "—" when unknown.
QString formatPerMinute(const RouteTraffic &traffic);
// A context window for the table: "32k" for 32768 (a multiple of 1024), the number
// otherwise, a dash when unknown.
QString formatContext(std::optional<qint64> tokens);
QString formatSeconds(std::optional<double> seconds);

// "120 requests, 3 failed": the route's totals since SLP started.
QString totalsText(const RouteCounters &counters);

// The tooltip: headline, traffic headline, then one line per route.
QString tooltipText(const StatusSnapshot &snapshot);

// `--once` output: "SLP URL: STATE (headline)" then one aligned line per route with its
// totals since SLP started, its upstream name, discovery state and context window
// ("(discovered, context 32768)"), then failureReport().
QString onceReport(const StatusSnapshot &snapshot);
// Each route whose condition is not ok, with its last failure (time in UTC, RFC 3339):
//   routes not ok:
//     phi-4: failing; last failure 2026-05-01T10:00:00Z: connection refused (request id slpq...)
//     gemma: slow; no failure reported
// Empty when every route is ok. A stable format, for scripts.
QString failureReport(const StatusSnapshot &snapshot);
int onceExitCode(Health health); // 0 ok, 1 attention, 2 alert

// The id -> upstream mapping for the clipboard, aligned as slp's own route dump.
QString mappingText(const QList<RouteStatus> &routes);

} // namespace slp::monitor
