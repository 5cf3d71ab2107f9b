#!/usr/bin/env bash
# A WebSocket tunnel's added latency per echoed frame: the `ws` client (tests/node) sends N
# small Realtime-shaped messages one at a time to the mock upstream's WebSocket backend and
# waits for each echo, once straight to the mock and once through slp, in alternating
# rounds. Prints the round trip p50/p99 of each and slp's addition. Also nginx, as a plain
# WebSocket proxy (proxy_http_version 1.1 with Upgrade/Connection passed), for the floor of
# one hop.
#
#   bench/tunnel.sh [--rounds R] [--messages N] [--build DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_BENCH_BUILD_DIR:-$here/build}"
rounds=3
messages=2000
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds="${2:?}"; shift ;;
    --messages) messages="${2:?}"; shift ;;
    --build) build="${2:?}"; shift ;;
    -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tunnel.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
source "$here/scripts/lib.sh"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends nginx-light >/dev/null
}
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -d "$here/tests/node/node_modules/ws" ] ||
    (cd "$here/tests/node" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target slp mock_upstream | tail -n 1

tmp="$(mktemp -d /tmp/slp-tunnel.XXXXXX)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

mock_port=$(free_port)
"$build/tests/mock_upstream/mock_upstream" --listen "127.0.0.1:$mock_port" --models rt \
    >"$tmp/mock.log" 2>&1 &
pids+=($!)
wait_port "$mock_port"
cat >"$tmp/slp.yaml" <<YAML
listen: "127.0.0.1:0"
backends:
  - name: rt
    url: http://127.0.0.1:$mock_port
    model: rt
YAML
"$build/daemon/slp" --config "$tmp/slp.yaml" >"$tmp/slp.log" 2>&1 &
pids+=($!)
slp_port=$(wait_listening "$tmp/slp.log")
nginx_port=$(free_port)
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx;
    proxy_temp_path $tmp/nginx;
    fastcgi_temp_path $tmp/nginx;
    uwsgi_temp_path $tmp/nginx;
    scgi_temp_path $tmp/nginx;
    server {
        listen 127.0.0.1:$nginx_port;
        location / {
            proxy_pass http://127.0.0.1:$mock_port;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_buffering off;
        }
    }
}
NGINX
"$nginx_bin" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" &
pids+=($!)
wait_port "$nginx_port"

script="$here/tests/node/realtime_ws.mjs"
measure() { # name port -> "name p50 p99" in microseconds
    local out
    out=$(node "$script" "ws://127.0.0.1:$2" rt "echo:$messages" |
        sed -n 's/.*p50_us=\([0-9.]*\) p99_us=\([0-9.]*\).*/\1 \2/p')
    [ -n "$out" ] || { echo "tunnel.sh: no figures from the $1 run" >&2; exit 1; }
    echo "$1 $out"
}
declare -A p50 p99
for name in direct nginx slp; do p50[$name]=""; p99[$name]=""; done
for round in $(seq 1 "$rounds"); do
    for pair in "direct $mock_port" "nginx $nginx_port" "slp $slp_port"; do
        read -r name p5 p9 < <(measure $pair)
        p50[$name]+="$p5 "
        p99[$name]+="$p9 "
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
d50=$(echo "${p50[direct]}" | median)
echo "tunnel round trip per echoed frame, $messages messages x $rounds rounds (median of the rounds' p50/p99, us)"
printf '%-8s %10s %10s %12s\n' way p50 p99 "added p50"
for name in direct nginx slp; do
    m50=$(echo "${p50[$name]}" | median)
    m99=$(echo "${p99[$name]}" | median)
    printf '%-8s %10s %10s %12s\n' "$name" "$m50" "$m99" \
        "$(awk -v a="$m50" -v b="$d50" 'BEGIN { printf "%+.1f", a - b }')"
done
