#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""No test sleeps a fixed time over 50 ms and then asserts (a ctest; CONTRIBUTING.md "Tests").

A fixed sleep before an assertion is either too short on a busy machine (the test flakes) or
too long everywhere (the suite crawls). A test waits on the condition with a deadline instead
(QTRY_*_WITH_TIMEOUT, QSignalSpy::wait, a bounded poll); a "nothing happened" check waits the
one named window, slp::test::kQuietWindowMs (tests/support/quietwindow.h), or a multiple of it.

Scans every C++ file under tests/ (not node_modules; bench/ and fuzz/ are not tests) for
QTest::qWait, QThread::msleep/sleep/usleep, usleep, std::this_thread::sleep_for,
ConnectionPair::settle and pumpEvents (tests/support) with a literal duration over 50 ms,
and Python's time.sleep, followed within LOOKAHEAD lines by an assertion. A duration naming
kQuietWindowMs is the named window; one held in a variable is not judged. The sleeps kept
are in ALLOWED below, each with its reason; an entry that matches nothing fails the check
too, so the list stays true.

  check-test-sleeps.py [--root DIR]        scan DIR/tests (default: this checkout)
  check-test-sleeps.py --planted           prove the check catches a planted sleep
"""
import os
import re
import sys
import tempfile

import checkmain

LIMIT_MS = 50
LOOKAHEAD = 10  # lines after the sleep in which an assertion counts as following it

# (path under the root, text of the sleep call, why it stays)
ALLOWED = [
    ("tests/integration/tst_forward_stream.cpp", "QThread::msleep(250)",
     "the slow client's 2 s pause IS the scenario: slp must not pull the response in while "
     "nobody reads; the pause samples slp's RSS every 250 ms and waits for nothing"),
    ("tests/integration/tst_socket_transport.cpp", "QThread::msleep(150)",
     "a slow client's pauses while reading 200 MB are the scenario (backpressure), sampling "
     "slp's RSS; nothing to wait for"),
    ("tests/integration/tst_forward_bytes.cpp", "QThread::msleep(1500)",
     "the client not reading (no event loop runs in the test) while the upstream sends 16 MB "
     "and closes is the scenario; the close waits in the upstream's own buffers, so there is "
     "no event in the test to wait on"),
    ("tests/integration/tst_mock_upstream.cpp", "pumpEvents(200)",
     "the client holding its request 200 ms before it aborts is what the mock must measure "
     "(peer_closed_ms >= 150)"),
    ("tests/integration/tst_hostile_clients.cpp", "pumpEvents(2000)",
     "slp's CPU is measured over this 2 s window at the connection cap (an accept loop "
     "spinning would show); the window is the measurement"),
    ("tests/integration/tst_upstream_faults.cpp", "pumpEvents(200)",
     "the pause between attempts of a bounded poll (40 s deadline) until the backend answers"),
    ("tests/integration/tst_upstream_faults.cpp", "pumpEvents(300)",
     "slp closes the faulted connections before RSS and open fds are sampled for the leak "
     "comparison; a measurement with margins, no single event marks the end"),
    ("tests/integration/tst_upstream_faults.cpp", "pumpEvents(500)",
     "as above, after the 200 faults"),
    ("tests/integration/tst_catalog.cpp", "pumpEvents(150)",
     "spaces the three rounds over failing discovery probes; each round asserts what it "
     "fetched, not what the pause brought"),
    ("tests/monitor/tst_monitor_e2e.cpp", "pumpEvents(1200)",
     "'no notification' over several of the monitor's 300 ms polls: the window is counted in "
     "polls, which nothing in the test marks"),
    ("tests/monitor/tst_monitor_e2e.cpp", "pumpEvents(1500)",
     "'nothing more' over five of the monitor's 300 ms polls (as above)"),
    ("tests/unit/http/tst_response_writer.cpp", "settle(100)",
     "'nothing drains while the client does not read' holds only until TCP's zero-window probe "
     "(200 ms minimum RTO) lets the kernel compact its receive queue and take more: the window "
     "must end before that, so it is shorter than kQuietWindowMs"),
    ("tests/monitor/tst_monitor_e2e.cpp", "pumpEvents(700)",
     "two polls with the failure count climbing between the resets (as above)"),
]

SLEEP = re.compile(
    r"\b(?P<fn>QTest::qWait|QThread::msleep|QThread::usleep|QThread::sleep|usleep|"
    r"std::this_thread::sleep_for|settle|pumpEvents|time\.sleep)\s*\((?P<arg>[^;]*)\)\s*;?")
ASSERT = re.compile(r"\b(QVERIFY\w*|QCOMPARE\w*|QTRY_\w+|QFAIL|QEXPECT_FAIL|assert\w*)\s*\(")
CHRONO = re.compile(r"^(?:std::chrono::)?(milliseconds|microseconds|seconds)\s*\((\d+)\)$")
SUFFIX = re.compile(r"^(\d+)(ms|us|s)$")
UNIT_MS = {"ms": 1, "milliseconds": 1, "us": 0.001, "microseconds": 0.001, "s": 1000,
           "seconds": 1000}


def duration_ms(fn, arg):
    """The sleep in ms, None when not a literal (a variable: not judged), 0 for the window."""
    arg = arg.strip()
    if "kQuietWindowMs" in arg:
        return 0
    if fn == "settle" and arg == "":
        return 0  # ConnectionPair::settle() waits kQuietWindowMs
    if fn == "std::this_thread::sleep_for":
        m = CHRONO.match(arg) or SUFFIX.match(arg)
        if not m:
            return None
        if CHRONO.match(arg):
            return int(m.group(2)) * UNIT_MS[m.group(1)]
        return int(m.group(1)) * UNIT_MS[m.group(2)]
    try:
        value = float(arg)
    except ValueError:
        return None
    if fn in ("QThread::sleep", "time.sleep"):
        return value * 1000
    if fn in ("usleep", "QThread::usleep"):
        return value / 1000
    return value


def code_lines(text, python):
    """Lines with their comments cut (enough for this check: no sleeps inside strings)."""
    comment = r"#.*$" if python else r"//.*$"
    return [re.sub(comment, "", line) for line in text.split("\n")]


def scan(root):
    found = []  # (path, line number, call text)
    tests = os.path.join(root, "tests")
    for dirpath, dirnames, files in os.walk(tests):
        dirnames[:] = sorted(d for d in dirnames if d != "node_modules")
        for name in sorted(files):
            if not name.endswith((".cpp", ".h", ".py")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = code_lines(f.read(), name.endswith(".py"))
            for i, line in enumerate(lines):
                for m in SLEEP.finditer(line):
                    if m.group("fn") == "time.sleep" and not name.endswith(".py"):
                        continue
                    ms = duration_ms(m.group("fn"), m.group("arg"))
                    if ms is None or ms <= LIMIT_MS:
                        continue
                    after = "\n".join(lines[i + 1:i + 1 + LOOKAHEAD])
                    rest_of_line = line[m.end():]
                    if ASSERT.search(rest_of_line) or ASSERT.search(after):
                        found.append((rel, i + 1, m.group(0).rstrip(";").strip()))
    return found


def check(root):
    found = scan(root)
    used = set()
    bad = []
    for rel, line, call in found:
        entry = next((a for a in ALLOWED if a[0] == rel and a[1] in call), None)
        if entry:
            used.add(entry[:2])
        else:
            bad.append((rel, line, call))
    for rel, line, call in bad:
        print(f"check-test-sleeps: {rel}:{line}: {call} is a fixed sleep over {LIMIT_MS} ms "
              f"followed by an assertion: wait on the condition with a deadline (QTRY_*, "
              f"QSignalSpy::wait), or for a 'nothing happened' check wait "
              f"slp::test::kQuietWindowMs (tests/support/quietwindow.h)", file=sys.stderr)
    stale = [a for a in ALLOWED if a[:2] not in used]
    for rel, call, _ in stale:
        print(f"check-test-sleeps: allow-list entry {rel} '{call}' matches no sleep: remove it",
              file=sys.stderr)
    print(f"check-test-sleeps: {len(bad)} fixed sleeps before assertions, "
          f"{len(used)} allowed, {len(stale)} stale allow-list entries")
    return 0 if not bad and not stale else 1


def planted():
    """The check must fail on a planted violation and pass on its fixed form."""
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "tests", "unit"))
        path = os.path.join(tmp, "tests", "unit", "tst_planted.cpp")

        def verdict(body):
            with open(path, "w") as f:
                f.write(body)
            return [f for f in scan(tmp)]
        caught = verdict("void f()\n{\n    QTest::qWait(200);\n    QVERIFY(done);\n}\n")
        window = verdict("void f()\n{\n    QTest::qWait(slp::test::kQuietWindowMs);\n"
                         "    QVERIFY(!done);\n}\n")
        chrono = verdict("void f()\n{\n    std::this_thread::sleep_for(std::chrono::"
                         "milliseconds(300));\n    QCOMPARE(a, b);\n}\n")
        short = verdict("void f()\n{\n    QTest::qWait(20);\n    QVERIFY(done);\n}\n")
    ok = len(caught) == 1 and not window and len(chrono) == 1 and not short
    print(f"check-test-sleeps --planted: planted {'caught' if caught else 'MISSED'}, "
          f"window {'passed' if not window else 'FLAGGED'}, chrono "
          f"{'caught' if chrono else 'MISSED'}, 20 ms {'passed' if not short else 'FLAGGED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    checkmain.run(__doc__, check, planted)
