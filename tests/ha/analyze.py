#!/usr/bin/env python3
"""Reads the client's records and the test's events and prints the failover figures; exits 1
when a bound is missed: the address moves within 3 s of a kill -9; only requests in flight on
the killed machine fail; a planned stop and each return fail nothing.

    analyze.py RECORDS EVENTS
Events are lines "NAME UNIX_TIME": kill_sent, kill_a (A reaped), vip_b, back_a, stop_b, b_exited,
vip_a, back_b, end.
"""
import json
import sys

records = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
events = {}
for line in open(sys.argv[2]):
    name, at = line.split()
    events[name] = float(at)

problems = []


def window(a, b):
    return [r for r in records if r["end"] > events[a] and r["start"] < events[b]]


def show(title, rs):
    failed = [r for r in rs if r["result"] != "ok"]
    refused = sum(r["refused"] for r in rs)
    served = sorted({r["served"] for r in rs if r["result"] == "ok"})
    print("  %-34s %4d requests, %d failed, %d refused connects retried, served by %s"
          % (title, len(rs), len(failed), refused, "+".join(served) or "-"))
    return failed


print("failover figures:")
kill = events["kill_a"]  # A reaped: its sockets are closed
sent = events["kill_sent"]
gap_vip = (events["vip_b"] - sent) * 1000
after = [r for r in records if r["start"] >= kill and r["result"] == "ok" and r["served"] == "B"]
gap_served = (min(r["end"] for r in after) - sent) * 1000 if after else float("inf")
print("  kill -9 of the active slp (A): address on B after %.0f ms; first answer from B %.0f ms "
      "after the kill" % (gap_vip, gap_served))
failed = show("kill -9 of A, until the address moved", window("kill_sent", "back_a"))
in_flight = [r for r in failed if r["start"] < kill]
print("  of those failed, in flight on A at the kill: %d" % len(in_flight))
for r in failed:
    print("    failed: %s started %+.0f ms from the kill, ended %+.0f ms: %s"
          % (r["kind"], (r["start"] - kill) * 1000, (r["end"] - kill) * 1000,
             " ".join(r["why"].split())))
# The bound is on the address (what VRRP and the check decide); the first answer also waits
# for the client's next retry, which a loaded machine stretches: printed, not bounded.
if gap_vip > 3000:
    problems.append("the address took over 3 s to move after kill -9")
if len(in_flight) != len(failed):
    problems.append("%d requests failed that were not in flight at the kill" % (len(failed) - len(in_flight)))
for name, a, b in (("A comes back (address stays on B)", "back_a", "stop_b"),
                   ("planned stop of B (drain)", "stop_b", "back_b"),
                   ("B comes back (address stays on A)", "back_b", "end")):
    if show(name, window(a, b)):
        problems.append("requests failed during: " + name)
print("  planned stop of B: slp drained and exited %.0f ms after SIGTERM; address on A %.0f ms "
      "after that" % ((events["b_exited"] - events["stop_b"]) * 1000,
                      (events["vip_a"] - events["b_exited"]) * 1000))
streams = [r for r in records if r["kind"] == "stream" and r["result"] == "ok"]
print("  in all: %d requests (%d streams answered whole)" % (len(records), len(streams)))
for p in problems:
    print("FAIL: " + p)
sys.exit(1 if problems else 0)
