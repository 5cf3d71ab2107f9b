// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace slp::test {

// How long a "nothing happened" check watches before it believes it: a write that must not
// reach the client, a timer that must not fire, a close that must not come. Everything such a
// check waits for is local (loopback sockets, in-process timers) and shows within a few
// milliseconds when it happens, so a short window suffices; a longer one only slows the suite.
// Such a check can pass wrongly on a very slow machine, never fail wrongly. A test waiting for
// something that SHOULD happen waits on the condition with a deadline instead
// (QTRY_*_WITH_TIMEOUT, QSignalSpy::wait). scripts/check-test-sleeps.py enforces both.
constexpr int kQuietWindowMs = 100;

} // namespace slp::test
