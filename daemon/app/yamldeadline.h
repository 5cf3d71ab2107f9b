// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "config/config.h"

#include <QString>

#include <chrono>
#include <functional>
#include <optional>

namespace slp {

// yaml-cpp 0.7 loops forever on some malformed input (a line in block context starting with
// ','). One guard bounds every parse by the same deadline, in the two ways a process can
// afford: where a hang may end the process (start-up, `slp --check`) the parse runs on a
// thread it can abandon; where it may not (a reload in the serving daemon) the file is
// checked by `slp --check` in a child process that is killed at the deadline.
inline constexpr std::chrono::seconds kYamlDeadline{10};

// What is said when the deadline passes, for `path`.
QString yamlDeadlineMessage(const QString &path);

// Runs `load` on a thread; nullopt when it did not finish in time (the caller exits: the
// stuck thread ends with the process).
std::optional<ConfigResult> loadWithinDeadline(const std::function<ConfigResult()> &load);

} // namespace slp
