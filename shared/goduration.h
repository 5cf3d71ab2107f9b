// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringView>

#include <chrono>
#include <optional>

namespace slp {

// Go's time.Duration text form, because the config and the debug catalog speak it
// ("300ms", "1.5s", "1h30m"; printed as Go prints them: "1m0s", "1m30s", "300ms", "0s").
using Nanoseconds = std::chrono::nanoseconds;

// Parses Go duration syntax: an optional sign, then one or more decimal numbers with a unit
// (ns, us, µs, ms, s, m, h). A bare "0" is allowed. On failure returns nullopt and, when
// `error` is given, a one-line reason ("unknown unit \"x\"", "missing unit", ...).
std::optional<Nanoseconds> parseGoDuration(QStringView text, QString *error = nullptr);

// Formats exactly as Go's Duration.String() does.
QString formatGoDuration(Nanoseconds d);

} // namespace slp
