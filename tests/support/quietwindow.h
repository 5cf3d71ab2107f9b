// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QTest>

namespace slp::test {

// How long a "nothing happened" check watches, named once: long enough that a stray write or
// a timer firing early shows even on a busy 2-core box, short enough to keep suites quick.
// Everything that should happen is waited for on its condition, with a deadline, instead.
inline constexpr int kQuietWindowMs = 300;

// Runs the event loop for the quiet window: what follows checks that nothing happened in it.
inline void watchQuietWindow(int ms = kQuietWindowMs)
{
    QTest::qWait(ms);
}

} // namespace slp::test
