#!/usr/bin/env bash
# A bounded mixed-traffic soak of the real slp in front of the mock upstream:
# streams, large bodies, client aborts, upstream faults (mock knobs and a refused backend),
# local errors, and a SIGHUP reload every 20 s. Checks that every request was answered or
# deliberately broken, that slp_requests_total matches what the client counted, and that
# slp's RSS is flat after the warm-up (the series is printed). Exit 0 when all holds.
#
#   scripts/soak.sh                     ~10 minutes, 6 client workers
#   scripts/soak.sh --minutes 2
#   scripts/soak.sh --minutes 1 --valgrind   slp under valgrind memcheck (definite leaks and
#                                            memory errors fail the run)
#   scripts/soak.sh --minutes 1 --asan       the ASan/LSan build (scripts/test-asan.sh's dir)
#
# Options: --workers N (client workers), --build DIR (a configured build dir; default
#          $SLP_BUILD_DIR or build/), --transport socket|qnam (upstream_transport; default socket, as in slp),
#          --slp-workers N (slp's own `workers:`; default 1).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
minutes=10
workers=6
transport=socket
slp_workers=1
mode=plain
build="${SLP_BUILD_DIR:-$here/build}"
while [ $# -gt 0 ]; do
    case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --transport) transport="$2"; shift 2 ;;
    --slp-workers) slp_workers="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --valgrind) mode=valgrind; shift ;;
    --asan) mode=asan; build="${SLP_ASAN_BUILD_DIR:-$here/build-asan}"; shift ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "soak: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ "$mode" = valgrind ] && [ "$workers" -gt 3 ]; then workers=3; fi

if [ ! -f "$build/CMakeCache.txt" ]; then
    extra=()
    [ "$mode" = asan ] && extra=(-DSLP_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
    cmake -S "$here" -B "$build" -DSLP_WERROR=ON "${extra[@]}" >/dev/null
fi
cmake --build "$build" --parallel "$(nproc)" --target slp mock_upstream >/dev/null
slp_bin="$build/daemon/slp"
mock_bin="$build/tests/mock_upstream/mock_upstream"

work="$(mktemp -d /tmp/slp-soak.XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

# shellcheck source=scripts/lib.sh
. "$here/scripts/lib.sh"

"$mock_bin" --listen 127.0.0.1:0 >"$work/mock.out" 2>"$work/mock.err" &
pids+=($!)
mock_port="$(wait_listening "$work/mock.out")"
closed_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"

max_body=$((8 * 1024 * 1024))
write_config() { # $1: a timeout that alternates between reloads
    cat >"$work/slp.yaml" <<YAML
listen: "127.0.0.1:0"
upstream_transport: $transport
workers: $slp_workers
max_body_bytes: 8MiB
header_timeout: 10s
idle_timeout: 30s
backends:
  - name: mock
    url: http://127.0.0.1:$mock_port
    model: mock-upstream
    timeout: $1
  - name: mock-agg
    url: http://127.0.0.1:$mock_port
    model: mock-upstream
    timeout: $1
    aggregate: true
  - name: refused
    url: http://127.0.0.1:$closed_port
    model: refused-upstream
    timeout: 5s
YAML
}
write_config 30s

runner=()
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
if [ "$mode" = valgrind ]; then
    runner=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite
        --errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=30
        --suppressions="$here/scripts/valgrind.supp" --log-file="$work/valgrind.log")
fi
"${runner[@]}" "$slp_bin" --config "$work/slp.yaml" 2>"$work/slp.err" &
slp_pid=$!
pids+=("$slp_pid")
slp_port="$(wait_listening "$work/slp.err")"
# Under valgrind $! is valgrind itself, which is the process slp runs as (same pid).
echo "soak: slp pid $slp_pid on port $slp_port ($mode, $transport, slp workers: $slp_workers), mock on $mock_port, $minutes min, $workers workers"

seconds=$(python3 -c "print(int(float('$minutes') * 60))")
client_timeout=60
[ "$mode" = valgrind ] && client_timeout=180
python3 "$here/tests/soak/soak_client.py" --port "$slp_port" --seconds "$seconds" \
    --workers "$workers" --max-body "$max_body" --timeout "$client_timeout" >"$work/client.json" &
client_pid=$!
pids+=("$client_pid")

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$slp_pid/status" 2>/dev/null || echo 0; }
series=()
reloads=0
start=$(date +%s)
while kill -0 "$client_pid" 2>/dev/null; do
    sleep 10
    now=$(($(date +%s) - start))
    series+=("${now}s:$(rss)")
    if [ $((now % 20)) -lt 10 ]; then
        reloads=$((reloads + 1))
        if [ $((reloads % 2)) -eq 1 ]; then write_config 45s; else write_config 30s; fi
        kill -HUP "$slp_pid"
    fi
done
wait "$client_pid" || true

metrics="$(python3 - "$slp_port" <<'PY'
import sys, urllib.request, re, json
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=30).read().decode()
codes = {}
for line in text.splitlines():
    m = re.match(r'slp_requests_total\{([^}]*)\} (\S+)', line)
    if m:
        code = re.search(r'code="(\d+)"', m.group(1)).group(1)
        codes[code] = codes.get(code, 0) + int(float(m.group(2)))
print(json.dumps(codes))
PY
)"
end_rss=$(rss)

kill -TERM "$slp_pid"
slp_status=0
wait "$slp_pid" || slp_status=$?

result=0
python3 - "$work/client.json" "$metrics" "$slp_status" "$reloads" "$(grep -c 'reload: [0-9]* routes from' "$work/slp.err" || true)" "$mode" "${series[@]}" <<'PY' || result=$?
import json, sys
client = json.load(open(sys.argv[1]))
slp = json.loads(sys.argv[2])
slp_status, reloads, reload_lines = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
mode = sys.argv[6]
series = [(s.split(":")[0], int(s.split(":")[1])) for s in sys.argv[7:]]
ok = True
total = sum(client["sent"].values())
print(f"soak: {total} requests in {client['seconds']} s: " +
      ", ".join(f"{k} {v}" for k, v in sorted(client["sent"].items())))
print("soak: client saw codes  " + json.dumps(client["codes"]) +
      f" plus {client['early_aborts']} aborted before the head")
print("soak: slp_requests_total " + json.dumps(slp))
for code in sorted(set(client["codes"]) | set(slp)):
    want, got = client["codes"].get(code, 0), slp.get(code, 0)
    if code == "499":
        continue
    if want != got:
        ok = False
        print(f"soak: MISMATCH code {code}: client {want}, slp {got}")
if slp.get("499", 0) > client["early_aborts"] + client["codes"].get("499", 0):
    ok = False
    print(f"soak: MISMATCH 499: slp {slp.get('499', 0)} > aborts {client['early_aborts']}")
print(f"soak: 499 (client gone before the head): slp {slp.get('499', 0)} of "
      f"{client['early_aborts']} early aborts (a request slp never read is not counted)")
errs = client["errors"]
print("soak: errors by kind: " + (json.dumps(errs) if errs else "none"))
if errs or client["hung_workers"]:
    ok = False
print(f"soak: reloads sent {reloads}, reload lines logged {reload_lines}")
if reload_lines < reloads:
    ok = False
print("soak: RSS series (KiB): " + " ".join(f"{t}={r}" for t, r in series))
if len(series) >= 4:
    # Peak against peak: 1-4 MB bodies make RSS a sawtooth, so single samples say little.
    # A leak shows as the last quarter's peak above the second quarter's.
    n = len(series)
    warm = max(r for _, r in series[max(1, n // 4):max(2, n // 2)])
    peak_late = max(r for _, r in series[(3 * n) // 4:])
    growth = peak_late - warm
    print(f"soak: RSS peak after warm-up {warm} KiB, peak of the last quarter {peak_late} KiB, "
          f"growth {growth} KiB")
    if growth > max(8 * 1024, warm // 10):
        if mode == "plain":
            ok = False
            print("soak: RSS not flat")
        else:
            # ASan's quarantine and valgrind's bookkeeping grow on their own; their leak
            # checkers are the verdict in those modes, RSS only in a plain run.
            print(f"soak: RSS grew under {mode} (not a verdict in this mode)")
print(f"soak: slp exit status {slp_status}")
if slp_status != 0:
    ok = False
print("soak: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
if [ "$mode" = valgrind ]; then
    echo "soak: valgrind summary:"
    grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost" "$work/valgrind.log" || true
fi
if [ "$mode" = asan ] && grep -q "ERROR: \(Address\|Leak\)Sanitizer\|runtime error" "$work/slp.err"; then
    grep -A30 -m3 "ERROR: \|runtime error" "$work/slp.err"
    result=1
fi
echo "soak: logs in $work"
exit "$result"
