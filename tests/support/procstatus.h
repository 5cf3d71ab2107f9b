// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QtGlobal>

namespace slp::test {

// VmRSS of process `pid` in KiB, from /proc/PID/status; -1 when unreadable.
qint64 residentKb(qint64 pid);

} // namespace slp::test
