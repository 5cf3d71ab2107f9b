// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QTest>

namespace slp::test {

// How long a "nothing happened" check watches before it believes it: a write that must not
// reach the client, a timer that must not fire, a close that must not come. Everything such a
// check waits for is local (loopback sockets, in-process timers) and shows within a few
// milliseconds when it happens; 300 ms also outlasts the 100-200 ms timers the forward tests
// must see not firing, and a longer window only slows the suite.
// Such a check can pass wrongly on a very slow machine, never fail wrongly. A test waiting for
// something that SHOULD happen waits on the condition with a deadline instead
// (QTRY_*_WITH_TIMEOUT, QSignalSpy::wait). scripts/check-test-sleeps.py enforces both.
inline constexpr int kQuietWindowMs = 300;

// Runs the event loop for the quiet window: what follows checks that nothing happened in it.
inline void watchQuietWindow(int ms = kQuietWindowMs)
{
    QTest::qWait(ms);
}

} // namespace slp::test
