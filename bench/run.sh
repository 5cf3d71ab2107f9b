#!/usr/bin/env bash
# SLP's three-way benchmark on loopback: the same load direct to the upstream, through nginx
# (a plain reverse proxy: the floor for one hop) and through slp, interleaved. Prints a table
# and writes bench/results/latest.json (--quick: bench/results/quick.json). See bench/README.md.
#
#   bench/run.sh [--quick] [--transport qnam|socket|both|auto|LIST] [--baseline SLP]
#                [--readme|--no-readme] [-- slp_bench options...]
#   bench/run.sh --transport socket -- --only multipart   # only the multipart uploads
#
# A full run (not --quick and no --only, or any run with --readme) rewrites the results block of
# bench/README.md (between its bench-table markers) with the table, the date, the machine and
# this command, and plots the size sweeps to bench/overhead-by-size.png (gnuplot); a quick run
# plots to bench/results/quick-sizes.png and leaves the README alone.
#
# LIST is comma-separated slp instances, each qnam or socket with an optional -wN for
# `workers: N` (e.g. socket,socket-w2): one column each, at most 4. --baseline SLP adds, for
# each instance, the same one run by another slp binary (say, a build of the previous
# commit), as a `-base` column: before and after measured side by side in one run.
#
# Installs what it needs with apt-get (Debian 12), builds with -DSLP_BUILD_BENCH=ON, starts
# nginx, the mock upstream and slp on 127.0.0.1, and stops every process it started on exit.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_BENCH_BUILD_DIR:-$here/build-bench}"
base="${SLP_BENCH_PORT_BASE:-18400}"
quick=0
transport=auto
out=""
baseline=""
readme=""
passthrough=()
command_line="bench/run.sh$(printf ' %q' "$@")"

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --transport) transport="${2:?--transport needs qnam, socket, both or auto}"; shift ;;
    --out) out="${2:?--out needs a file}"; shift ;;
    --baseline) baseline="${2:?--baseline needs an slp binary}"; shift ;;
    --readme) readme=1 ;;
    --no-readme) readme=0 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; passthrough=("$@"); break ;;
    *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

# -- dependencies ---------------------------------------------------------------------------
packages=(build-essential cmake ninja-build pkg-config qt6-base-dev qt6-httpserver-dev
    qt6-websockets-dev libyaml-cpp-dev nginx-light gnuplot-nox)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Any nginx will do (nginx-light, nginx-core, ...); only install one when none is there.
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
    missing=("${missing[@]/nginx-light/}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if [ "${#missing[@]}" -gt 0 ]; then
    echo "run.sh: installing ${missing[*]}"
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
    $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

# -- build ----------------------------------------------------------------------------------
echo "run.sh: building in $build"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLP_WERROR=ON \
    -DSLP_BUILD_BENCH=ON -DSLP_BUILD_TESTS=ON -DSLP_BUILD_MONITOR=OFF >/dev/null
cmake --build "$build" --target slp mock_upstream slp_bench | tail -n 1
slp_bin="$build/daemon/slp"
mock_bin="$build/tests/mock_upstream/mock_upstream"
bench_bin="$build/bench/slp_bench"
for b in "$slp_bin" "$mock_bin" "$bench_bin"; do
    [ -x "$b" ] || { echo "run.sh: $b was not built" >&2; exit 1; }
done

# -- which transports -----------------------------------------------------------------------
# "socket" is measured only when the daemon wires a socket transport (otherwise slp would
# silently run qnam under that name); --transport socket|both forces it.
has_socket=0
grep -rqs "SocketTransport" "$here/daemon/upstream/" && has_socket=1
case "$transport" in
auto) if [ "$has_socket" = 1 ]; then transports=(socket qnam); else transports=(qnam); fi ;;
both) transports=(socket qnam) ;;
*)
    IFS=, read -r -a transports <<<"$transport"
    for t in "${transports[@]}"; do
        [[ "$t" =~ ^(qnam|socket)(-w[1-9][0-9]?)?$ ]] ||
            { echo "run.sh: --transport qnam|socket|both|auto or a list such as socket,socket-w2" >&2; exit 2; }
    done
    [ "${#transports[@]}" -le 4 ] || { echo "run.sh: at most 4 slp instances" >&2; exit 2; }
    ;;
esac
if [ "$has_socket" = 0 ] && printf '%s\n' "${transports[@]}" | grep -qx socket; then
    echo "run.sh: WARNING: no SocketTransport in daemon/upstream/: 'socket' may run qnam" >&2
fi

# -- processes ------------------------------------------------------------------------------
# Raise the descriptor limit for everything started below (2,000 streams = 4,000 sockets in slp).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
tmp="$(mktemp -d /tmp/slp-bench.XXXXXX)"
pids=()
cleanup() {
    local rc=$?
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ "$rc" -ne 0 ]; then
        for f in "$tmp"/*.log "$tmp"/nginx/error.log; do
            [ -s "$f" ] && { echo "--- $f (last lines)"; tail -n 15 "$f"; }
        done
    fi
    if [ -n "${SLP_BENCH_KEEP:-}" ]; then echo "run.sh: kept $tmp"; else rm -rf "$tmp"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

p_static=$((base + 1)) p_nginx_fast=$((base + 2)) p_nginx_mock=$((base + 3)) p_mock=$((base + 4))
p_sink=$((base + 5)) p_nginx_sink=$((base + 6)) p_slp=$((base + 7)) # slp: base+7 .. base+10
p_nginx_buffered=$((base + 11))
for port in $(seq $((base + 1)) $((base + 11))); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "run.sh: port $port is in use (set SLP_BENCH_PORT_BASE)" >&2
        exit 1
    fi
done

wait_port() { # port pid name
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || { echo "run.sh: $3 exited" >&2; return 1; }
        sleep 0.1
    done
    echo "run.sh: $3 did not listen on $1" >&2
    return 1
}

# nginx: a static ~300-byte JSON (the fast upstream) and two plain reverse proxies
# (keep-alive upstream, HTTP/1.1, no buffering either way).
mkdir -p "$tmp/nginx"
static_json='{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"static","choices":[{"index":0,"message":{"role":"assistant","content":"The capital of France is Paris."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":42,"completion_tokens":8,"total_tokens":50}}'
cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
user root;
worker_processes auto;
worker_rlimit_nofile 20000;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 10000; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    client_max_body_size 100m;
    client_body_buffer_size 1m;
    keepalive_requests 1000000;
    keepalive_timeout 300s;

    upstream static_up { server 127.0.0.1:$p_static; keepalive 128; keepalive_requests 1000000; }
    upstream mock_up { server 127.0.0.1:$p_mock; keepalive 1024; keepalive_requests 1000000; }
    upstream sink_up { server 127.0.0.1:$p_sink; keepalive 16; keepalive_requests 1000000; }

    server {
        listen 127.0.0.1:$p_static backlog=4096;
        location / { default_type application/json; return 200 '$static_json'; }
    }
    server {
        listen 127.0.0.1:$p_nginx_fast backlog=4096;
        location / {
            proxy_pass http://static_up;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            # Request buffering stays on here: unbuffered, nginx sends the head and the small
            # body in two writes, the static server's "return" answers before the body and
            # then closes the connection now and then, and nginx cannot retry a POST.
            proxy_request_buffering on;
        }
    }
    server {
        listen 127.0.0.1:$p_nginx_mock backlog=4096;
        location / {
            proxy_pass http://mock_up;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
        }
    }
    server {
        listen 127.0.0.1:$p_nginx_sink backlog=4096;
        location / {
            proxy_pass http://sink_up;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
        }
    }
    # The nginx-buf column: the whole body read (to memory, then a temp file past
    # client_body_buffer_size) before the upstream gets a byte, as slp does.
    server {
        listen 127.0.0.1:$p_nginx_buffered backlog=4096;
        location / {
            proxy_pass http://sink_up;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering on;
        }
    }
}
EOF
"$nginx_bin" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" &
nginx_pid=$!
pids+=("$nginx_pid")

"$mock_bin" --listen "127.0.0.1:$p_mock" >"$tmp/mock.log" 2>&1 &
mock_pid=$!
pids+=("$mock_pid")

# The large-body upstream: reads the body, discards it, answers 200 {}.
"$bench_bin" --sink "127.0.0.1:$p_sink" >"$tmp/sink.log" 2>&1 &
sink_pid=$!
pids+=("$sink_pid")

wait_port "$p_static" "$nginx_pid" nginx
wait_port "$p_sink" "$sink_pid" "slp_bench --sink"
wait_port "$p_nginx_mock" "$nginx_pid" nginx
wait_port "$p_mock" "$mock_pid" mock_upstream
sleep 0.3 # nginx's workers: slp_bench finds them as the master's children

slp_args=()
i=0
instances=("${transports[@]}")
if [ -n "$baseline" ]; then
    [ -x "$baseline" ] || { echo "run.sh: --baseline $baseline is not an executable" >&2; exit 2; }
    for t in "${transports[@]}"; do instances+=("$t-base"); done
    [ "${#instances[@]}" -le 4 ] || { echo "run.sh: at most 4 slp instances with --baseline" >&2; exit 2; }
fi
for t in "${instances[@]}"; do
    port=$((p_slp + i))
    i=$((i + 1))
    bin="$slp_bin"
    kind="${t%-base}"
    [ "$kind" != "$t" ] && bin="$baseline"
    workers=1
    [[ "$kind" == *-w* ]] && workers="${kind##*-w}"
    cat >"$tmp/slp-$t.yaml" <<EOF
listen: "127.0.0.1:$port"
upstream_transport: ${kind%%-w*}
workers: $workers
max_upstream_connections: 4096
max_connections: 10000
idle_timeout: 300s
max_body_bytes: 64MiB
backends:
  - name: static
    url: http://127.0.0.1:$p_static
    model: static
  - name: mock
    url: http://127.0.0.1:$p_mock
    model: mock
    timeout: 120s
  - name: sink
    url: http://127.0.0.1:$p_sink
    model: sink
  - name: mock-agg
    url: http://127.0.0.1:$p_mock
    model: mock
    timeout: 120s
    aggregate: true
EOF
    "$bin" --config "$tmp/slp-$t.yaml" >"$tmp/slp-$t.log" 2>&1 &
    spid=$!
    pids+=("$spid")
    wait_port "$port" "$spid" "slp ($t)"
    slp_args+=(--slp "slp-$t=127.0.0.1:$port:$spid")
done

# -- run ------------------------------------------------------------------------------------
mkdir -p "$here/bench/results"
if [ -z "$out" ]; then
    if [ "$quick" = 1 ]; then out="$here/bench/results/quick.json"; else out="$here/bench/results/latest.json"; fi
fi
bench_args=(--direct-fast "127.0.0.1:$p_static" --direct-mock "127.0.0.1:$p_mock"
    --direct-sink "127.0.0.1:$p_sink" --nginx-fast "127.0.0.1:$p_nginx_fast"
    --nginx-mock "127.0.0.1:$p_nginx_mock" --nginx-sink "127.0.0.1:$p_nginx_sink"
    --nginx-buffered-sink "127.0.0.1:$p_nginx_buffered"
    --nginx-pid "$nginx_pid" --mock-pid "$mock_pid" "${slp_args[@]}" --json "$out")
[ "$quick" = 1 ] && bench_args+=(--quick)
commit="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
load="$(cut -d' ' -f1-3 /proc/loadavg)"
note="commit $commit (worktree may differ); $("$nginx_bin" -v 2>&1); $(nproc) cores; load average at start $load; instances: ${instances[*]}${baseline:+ (-base: $baseline)}"
echo "run.sh: $note"
echo "run.sh: generator, proxies and upstreams share the same $(nproc) cores"
plot_data="${out%.json}-sizes.dat"
# Whether what was built differs from the commit (this run's own outputs do not count).
dirty=""
git -C "$here" diff --quiet HEAD -- . ':!bench/results' ':!bench/README.md' \
    ':!bench/overhead-by-size.png' 2>/dev/null || dirty=" plus uncommitted changes"
started="$(date -u '+%Y-%m-%d %H:%M UTC')"
"$bench_bin" "${bench_args[@]}" --note "$note" --plot-data "$plot_data" "${passthrough[@]}" |
    tee "$tmp/table.txt"
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"
# Only a run of every scenario may replace the README's table: --only picks a few.
case " ${passthrough[*]:-} " in *" --only"*) [ -z "$readme" ] && readme=0 ;; esac
[ -z "$readme" ] && { [ "$quick" = 1 ] && readme=0 || readme=1; }
png="$here/bench/results/quick-sizes.png"
[ "$readme" = 1 ] && png="$here/bench/overhead-by-size.png"
sizes_ran=0
grep -q "bodies by size" "$tmp/table.txt" && sizes_ran=1
if [ "$sizes_ran" = 1 ]; then
    if command -v gnuplot >/dev/null 2>&1; then
        names="direct nginx nginx-buf"
        for t in "${instances[@]}"; do names="$names slp-$t"; done
        gnuplot -e "data='$plot_data'; out='$png'; names='$names'; note='$started, commit $commit, load $load'" \
            "$here/bench/plot-sizes.gp" && echo "run.sh: plot in $png"
    else
        echo "run.sh: no gnuplot (apt-get install gnuplot-nox): no plot" >&2
    fi
fi
if [ "$readme" = 1 ]; then
    machine="$(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), Linux $(uname -r)"
    "$here/bench/readme-table.sh" "$here/bench/README.md" "$tmp/table.txt" \
        "$started" "commit $commit$dirty" "$machine" "$load" "$load_end" "$command_line" \
        "$([ "$sizes_ran" = 1 ] && echo overhead-by-size.png)"
    echo "run.sh: results table in bench/README.md"
fi
for t in "${instances[@]}"; do
    n="$(grep -ci "warn\|error\|fail" "$tmp/slp-$t.log" || true)"
    [ "$n" -gt 0 ] && echo "run.sh: slp ($t) logged $n warning/error lines, e.g.: $(grep -i -m1 "warn\|error\|fail" "$tmp/slp-$t.log")"
done
echo "run.sh: results in $out"
