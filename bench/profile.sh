#!/usr/bin/env bash
# Where a proxied request's time goes inside slp: small POSTs (wrk, c=16) through slp to
# nginx serving a static ~300-byte JSON, with slp run under one profiler at a time:
#
#   bench/profile.sh callgrind [qnam|socket]   instructions per request, top functions
#                                              (self and inclusive); repeatable on a busy
#                                              machine (it counts, it does not time)
#   bench/profile.sh strace [qnam|socket]      system calls per request, by name
#   bench/profile.sh perf [qnam|socket]        sampled CPU time by function (perf record
#                                              -e cpu-clock; needs linux-perf)
#
# Prints per-request figures: totals divided by the requests slp counted in /metrics.
# Environment: SLP_BENCH_BUILD_DIR (default build-bench/, as bench/run.sh), SECONDS_LOAD (10),
# CONNECTIONS (wrk's -c, 16), BODY_BYTES (pad the request body to about this size: the large
# body path; default the 300-byte chat request), EVENTS (stream: the mock upstream answers
# each request with this many SSE events, EVENT_INTERVAL_MS apart (default 0: back to back),
# and figures are per event), WORKERS (slp's `workers:`, 1).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tool="${1:-callgrind}"
transport="${2:-socket}"
build="${SLP_BENCH_BUILD_DIR:-$here/build-bench}"
seconds="${SECONDS_LOAD:-10}"
connections="${CONNECTIONS:-16}"
body_bytes="${BODY_BYTES:-0}"
events="${EVENTS:-0}"
event_interval="${EVENT_INTERVAL_MS:-0}"
workers="${WORKERS:-1}"
case "$tool" in callgrind | strace | perf) ;; *) sed -n '2,13p' "$0"; exit 2 ;; esac
case "$transport" in qnam | socket) ;; *) echo "profile: qnam or socket" >&2; exit 2 ;; esac

need=(wrk nginx valgrind strace)
[ "$tool" = perf ] && need+=(perf)
for b in "${need[@]}"; do
    command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || {
        echo "profile: $b is missing (apt-get install wrk nginx-light valgrind strace linux-perf)" >&2
        exit 1
    }
done
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLP_BUILD_BENCH=ON \
        -DSLP_BUILD_MONITOR=OFF >/dev/null
fi
cmake --build "$build" --target slp mock_upstream >/dev/null
slp_bin="$build/daemon/slp"

tmp="$(mktemp -d /tmp/slp-profile.XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -n "${SLP_PROFILE_KEEP:-}" ] && echo "profile: kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

# free_port, wait_port
. "$here/scripts/lib.sh"

upstream_port="$(free_port)"
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
user root;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx/body;
    client_max_body_size 100m;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$upstream_port;
        location / { default_type application/json; return 200 '{"id":"chatcmpl-profile","object":"chat.completion","created":1700000000,"model":"static","choices":[{"index":0,"message":{"role":"assistant","content":"The capital of France is Paris."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":42,"completion_tokens":8,"total_tokens":50}}'; }
    }
}
EOF
"$(command -v nginx || echo /usr/sbin/nginx)" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" &
pids+=($!)
wait_port "$upstream_port"
if [ "$events" -gt 0 ]; then
    # Streams come from the mock upstream (vLLM-like SSE), started beside nginx.
    upstream_port="$(free_port)"
    "$build/tests/mock_upstream/mock_upstream" --listen "127.0.0.1:$upstream_port" \
        >"$tmp/mock.log" 2>&1 &
    pids+=($!)
    wait_port "$upstream_port"
fi

slp_port="$(free_port)"
cat >"$tmp/slp.yaml" <<EOF
listen: "127.0.0.1:$slp_port"
upstream_transport: $transport
workers: $workers
backends:
  - name: static
    url: http://127.0.0.1:$upstream_port
    model: static
EOF
runner=()
case "$tool" in
callgrind) runner=(valgrind --tool=callgrind --callgrind-out-file="$tmp/callgrind.out"
    --instr-atstart=no) ;;
strace) runner=(strace -f -c -o "$tmp/strace.txt") ;;
perf) runner=(perf record -e cpu-clock -F 4999 -g -o "$tmp/perf.data" --) ;;
esac
"${runner[@]}" "$slp_bin" --config "$tmp/slp.yaml" 2>"$tmp/slp.err" &
slp_pid=$!
pids+=("$slp_pid")
wait_port "$slp_port"

python3 - "$tmp/body.json" "$body_bytes" <<'PY'
import json, sys
body = {"model": "static", "messages": [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France? Answer in one short sentence, please."}],
    "max_tokens": 32, "temperature": 0}
pad = int(sys.argv[2]) - len(json.dumps(body))
if pad > 0:
    body["messages"][1]["content"] += " " + "x" * pad
open(sys.argv[1], "w").write(json.dumps(body, separators=(",", ":")))
PY
cat >"$tmp/post.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$tmp/body.json", "rb")
wrk.body = f:read("*a")
f:close()
EOF
if [ "$events" -gt 0 ]; then
    sed -i 's/"temperature":0/"temperature":0,"stream":true/' "$tmp/body.json"
    printf 'wrk.headers["X-Mock-Events"] = "%s"\nwrk.headers["X-Mock-Event-Interval-Ms"] = "%s"\n' \
        "$events" "$event_interval" >>"$tmp/post.lua"
fi
# Warm-up outside the measurement (connections, pools, allocator).
wrk -t1 -c"$connections" -d2s -s "$tmp/post.lua" "http://127.0.0.1:$slp_port/v1/chat/completions" >/dev/null
count() {
    curl -s "http://127.0.0.1:$slp_port/metrics" |
        awk '/^slp_requests_total\{/ {s += $2} END {print s + 0}'
}
before="$(count)"
[ "$tool" = callgrind ] && callgrind_control -i on "$slp_pid" >/dev/null
wrk -t1 -c"$connections" -d"${seconds}s" -s "$tmp/post.lua" "http://127.0.0.1:$slp_port/v1/chat/completions" |
    grep -E "Requests/sec|Non-2xx" || true
[ "$tool" = callgrind ] && callgrind_control -i off "$slp_pid" >/dev/null
after="$(count)"
requests=$((after - before))
echo "profile: $requests requests through slp ($transport) under $tool"
if [ "$events" -gt 0 ]; then
    requests=$((requests * (events + 1))) # the figures below are per SSE event ([DONE] included)
    echo "profile: $requests SSE events; figures below are per event"
fi
# SIGINT to slp itself: under strace or perf it is the runner's child, and a runner does not
# always pass the signal on.
target="$(pgrep -P "$slp_pid" -x slp || true)"
kill -INT "${target:-$slp_pid}"
wait "$slp_pid" 2>/dev/null || true

case "$tool" in
callgrind)
    total="$(callgrind_annotate "$tmp/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')"
    echo "instructions per request: $((total / requests))"
    echo "-- self, top 30 (instructions per request, function)"
    callgrind_annotate --threshold=100 "$tmp/callgrind.out" 2>/dev/null |
        awk -v n="$requests" '/^ *[0-9,]+ .*[a-zA-Z_]/ && !/PROGRAM TOTALS/ {
            v=$1; gsub(",","",v); $1=""; if (c++ < 30) printf "%9.0f %s\n", v/n, substr($0, 1, 150) }'
    echo "-- inclusive, top 40"
    callgrind_annotate --inclusive=yes --threshold=100 "$tmp/callgrind.out" 2>/dev/null |
        awk -v n="$requests" '/^ *[0-9,]+ .*[a-zA-Z_]/ && !/PROGRAM TOTALS/ {
            v=$1; gsub(",","",v); $1=""; if (c++ < 40) printf "%9.0f %s\n", v/n, substr($0, 1, 150) }'
    ;;
strace)
    echo "-- system calls per request (all threads)"
    awk -v n="$requests" 'NR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ {
        printf "%8.2f %s\n", $4 / n, $NF }' "$tmp/strace.txt" | sort -rn | head -20
    ;;
perf)
    perf report -i "$tmp/perf.data" --no-children --sort symbol --stdio 2>/dev/null |
        grep -E "^ +[0-9]" | head -40
    ;;
esac
