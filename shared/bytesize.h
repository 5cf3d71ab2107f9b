// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringView>

#include <optional>

namespace slp {

// Sizes in the config: plain bytes ("1048576") or a number with KiB / MiB / GiB (also KB/MB/GB
// as powers of 1000, case-sensitive unit). Whitespace between number and unit allowed.
std::optional<qint64> parseByteSize(QStringView text, QString *error = nullptr);

// "64MiB", "512KiB", "1000" (largest binary unit that divides exactly).
QString formatByteSize(qint64 bytes);

} // namespace slp
