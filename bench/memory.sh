#!/usr/bin/env bash
# Memory of large request bodies, slp beside nginx in the same run (issue: bodies in bounded,
# returned memory). For each scenario it prints the proxy's resident memory (VmRSS; nginx:
# master and workers summed) before the burst, at its peak, and 6 s after the last answer:
#
#   burst8     8 concurrent 60 MB chat bodies
#   burst16    16 concurrent 60 MB bodies (slp with max_buffered_body_bytes: 256MiB when the
#              build knows the key)
#   slow50     50 connections (one client process) sending 64 MB bodies at 1 MB/s each for
#              SLOW_SECONDS (default 20) seconds, then closed; /healthz latency sampled
#              throughout (slp only)
#
#   bench/memory.sh [--only burst8|burst16|slow50] [--rename] [--build DIR] [--slp BINARY]
#
# --rename routes the bodies to a backend that calls the model otherwise ("Big-Upstream"), so
# slp rewrites the model value of every body: the case that once cost a renamed copy.
# --slp measures another slp binary (a build of an older commit, say) in place of this
# tree's; nginx runs beside it all the same.
#
# The upstream is slp_bench --sink (reads and discards each body, answers a small JSON), so
# only the proxy's memory moves. nginx runs with proxy_request_buffering on and
# client_max_body_size 256m (it spills bodies to a file). Every process it starts is stopped
# on exit; every wait is bounded.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_BENCH_BUILD_DIR:-$here/build-bench}"
only=""
slow_seconds="${SLOW_SECONDS:-20}"
other_slp=""
upstream_model=big
while [ $# -gt 0 ]; do
    case "$1" in
    --only) only="${2:?--only needs a scenario}"; shift ;;
    --build) build="${2:?--build needs a directory}"; shift ;;
    --slp) other_slp="${2:?--slp needs a binary}"; shift ;;
    --rename) upstream_model=Big-Upstream ;;
    -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "memory.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends nginx-light >/dev/null
}
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLP_BUILD_BENCH=ON \
    -DSLP_BUILD_TESTS=ON -DSLP_BUILD_MONITOR=OFF >/dev/null
cmake --build "$build" --target slp slp_bench | tail -n 1
slp_bin="${other_slp:-$build/daemon/slp}"
bench_bin="$build/bench/slp_bench"

tmp="$(mktemp -d /tmp/slp-memory.XXXXXX)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# free_port, wait_port
. "$here/scripts/lib.sh"

p_sink=$(free_port)
"$bench_bin" --sink "127.0.0.1:$p_sink" >"$tmp/sink.log" 2>&1 &
pids+=($!)
wait_port "$p_sink"

p_nginx=$(free_port)
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<NGINX
daemon off;
master_process on;
user root;
worker_processes 2;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    client_max_body_size 256m;
    upstream sink_up { server 127.0.0.1:$p_sink; keepalive 64; }
    server {
        listen 127.0.0.1:$p_nginx;
        location / {
            proxy_pass http://sink_up;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering on;
        }
    }
}
NGINX
"$nginx_bin" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" &
pids+=($!)
nginx_master=$!
wait_port "$p_nginx"

start_slp() { # extra yaml lines
    p_slp=$(free_port)
    cat >"$tmp/slp.yaml" <<YAML
listen: "127.0.0.1:$p_slp"
max_body_bytes: 256MiB
$1
backends:
  - name: big
    url: http://127.0.0.1:$p_sink
    model: $upstream_model
    timeout: 120s
YAML
    if ! "$slp_bin" --check --config "$tmp/slp.yaml" >/dev/null 2>&1; then
        echo "memory.sh: this slp refuses: $1 (left out)"
        sed -i "/^$1\$/d" "$tmp/slp.yaml"
    fi
    "$slp_bin" --config "$tmp/slp.yaml" >"$tmp/slp.log" 2>&1 &
    slp_pid=$!
    pids+=($slp_pid)
    wait_port "$p_slp"
}
stop_slp() { kill -TERM "$slp_pid"; wait "$slp_pid" 2>/dev/null || true; }

rss_kib() { # pids...: VmRSS summed
    local sum=0 v
    for pid in "$@"; do
        v=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        sum=$((sum + ${v:-0}))
    done
    echo "$sum"
}
nginx_pids() { echo "$nginx_master $(pgrep -P "$nginx_master" | tr '\n' ' ')"; }

make_body() { # bytes file
    python3 - "$1" "$2" <<'PY'
import sys
n = int(sys.argv[1])
head = b'{"model":"big","messages":[{"role":"user","content":"'
tail = b'"}]}'
with open(sys.argv[2], "wb") as f:
    f.write(head)
    f.write(b"a" * (n - len(head) - len(tail)))
    f.write(tail)
PY
}

# `clients` connections from one process, each sending a `bytes` body at 1 MB/s for
# `seconds`, then closing: what slp holds for slow uploads, without 50 client processes
# competing for the cores.
slow_clients() { # port clients bytes seconds
    python3 - "$@" <<'PY'
import socket, sys, time
port, clients, size, seconds = (int(a) for a in sys.argv[1:5])
head = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size
        + b'{"model":"big","messages":[{"role":"user","content":"')
socks = []
for _ in range(clients):
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    s.send(head)
    socks.append(s)
piece = b"a" * 50_000  # every 50 ms: 1 MB/s
end = time.time() + seconds
while time.time() < end:
    for s in socks:
        try:
            s.send(piece)
        except BlockingIOError:
            pass  # held back: the budget, or the kernel's buffers
    time.sleep(0.05)
for s in socks:
    s.close()
PY
}

# Runs `clients` curls of `file` at `port` (rate-limited when `rate` is set), sampling the RSS of
# `watch` every 100 ms; prints baseline, peak and the RSS 6 s after the last answer, in MiB.
burst() { # name port clients file rate watch-pids...
    local name=$1 port=$2 clients=$3 file=$4 rate=$5
    shift 5
    local base peak now codes=() cpids=()
    base=$(rss_kib "$@")
    peak=$base
    if [ -n "$rate" ]; then
        slow_clients "$port" "$clients" "$(stat -c %s "$file")" "$slow_seconds" &
        cpids+=($!)
        echo "cut-after-${slow_seconds}s" >>"$tmp/codes.$name"
    else
        for _ in $(seq "$clients"); do
            curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
                -H 'Expect:' --data-binary "@$file" "http://127.0.0.1:$port/v1/chat/completions" \
                >>"$tmp/codes.$name" 2>/dev/null &
            cpids+=($!)
        done
    fi
    while kill -0 "${cpids[@]}" 2>/dev/null; do
        now=$(rss_kib "$@")
        [ "$now" -gt "$peak" ] && peak=$now
        if [ -n "$HEALTH_PORT" ]; then
            curl -s -o /dev/null -w '%{time_total}\n' --max-time 2 \
                "http://127.0.0.1:$HEALTH_PORT/healthz" >>"$tmp/health.$name" || echo 2 >>"$tmp/health.$name"
        fi
        sleep 0.1
    done
    wait "${cpids[@]}" 2>/dev/null || true
    sleep 6
    now=$(rss_kib "$@")
    local answers
    answers=$(sort "$tmp/codes.$name" | uniq -c | awk '{printf "%s%s x%s", sep, $2, $1; sep=", "}')
    awk -v n="$name" -v b="$base" -v p="$peak" -v a="$now" -v ans="$answers" 'BEGIN {
        printf "%-22s baseline %6.1f MiB  peak %7.1f MiB  after 6 s %6.1f MiB  answers: %s\n",
            n, b / 1024, p / 1024, a / 1024, ans }'
    if [ -s "$tmp/health.$name" ]; then
        sort -n "$tmp/health.$name" | awk '{a[NR]=$1} END {printf "%-22s /healthz during it: %d samples, p50 %.1f ms, max %.1f ms\n", "", NR, a[int((NR+1)/2)]*1000, a[NR]*1000}'
    fi
    rm -f "$tmp/codes.$name"
}

slp_label="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -n "$other_slp" ] && slp_label="$other_slp (--slp)"
[ "$upstream_model" != big ] && slp_label="$slp_label, renaming to $upstream_model"
echo "memory.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), slp $slp_label"
make_body 60000000 "$tmp/body60"
HEALTH_PORT=""
if [ -z "$only" ] || [ "$only" = burst8 ]; then
    start_slp ""
    burst "burst8 slp" "$p_slp" 8 "$tmp/body60" "" "$slp_pid"
    stop_slp
    burst "burst8 nginx" "$p_nginx" 8 "$tmp/body60" "" $(nginx_pids)
fi
if [ -z "$only" ] || [ "$only" = burst16 ]; then
    start_slp "max_buffered_body_bytes: 256MiB"
    burst "burst16 slp" "$p_slp" 16 "$tmp/body60" "" "$slp_pid"
    stop_slp
    burst "burst16 nginx" "$p_nginx" 16 "$tmp/body60" "" $(nginx_pids)
fi
if [ -z "$only" ] || [ "$only" = slow50 ]; then
    make_body 64000000 "$tmp/body64"
    start_slp ""
    HEALTH_PORT=$p_slp
    burst "slow50 slp" "$p_slp" 50 "$tmp/body64" 1M "$slp_pid"
    HEALTH_PORT=""
    stop_slp
    burst "slow50 nginx" "$p_nginx" 50 "$tmp/body64" 1M $(nginx_pids)
fi
