// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "report.h"
#include "table.h"

#include <QJsonObject>

namespace slp::bench {

// Latency by body size, c=1 against the sink: request bodies (the sink discards them and
// answers {}) or response bodies (a 300-byte request, the sink answers N bytes). Appends the
// table's lines and the targets, returns the JSON, and adds one row per size to `plot`:
// "bytes label" then per way "p50_ms added_ms".
QJsonObject runSizes(const QList<Way> &ways, const Options &opt, bool responses, QList<Line> &lines,
                     QList<Check> &checks, QStringList &plot);

} // namespace slp::bench
