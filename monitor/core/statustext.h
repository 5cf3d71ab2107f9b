#pragma once

#include "status.h"

#include <QString>
#include <QStringList>

namespace slp::monitor {

// The words every face uses (tray tooltip, menu, window, `--once`), written once.

// "alert: 1 ambiguous, 1 probe error" / "ok: 4 routes" / "alert: SLP unreachable (...)".
QString headline(const StatusSnapshot &snapshot);

// "qwen3-8b → Qwen/Qwen3-8B: ambiguous"
QString routeLine(const RouteStatus &route);

// The tooltip: headline, then one line per route.
QString tooltipText(const StatusSnapshot &snapshot);

// `--once` output: "SLP URL: STATE (headline)" then one aligned line per route.
QString onceReport(const StatusSnapshot &snapshot);
int onceExitCode(Health health); // 0 ok, 1 attention, 2 alert

// The id -> upstream mapping for the clipboard, aligned as slp's own route dump.
QString mappingText(const QList<RouteStatus> &routes);

} // namespace slp::monitor
