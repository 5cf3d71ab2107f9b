#!/usr/bin/env bash
# A very large response through slp to a client that reads slower than the upstream sends,
# once per upstream transport: slp must hold back the upstream (backpressure) instead of
# buffering, so its RSS stays flat however long the body. Prints slp's RSS every second
# and exits 0 when every byte arrived and the peak RSS stayed under --max-rss.
#
#   scripts/slow-client.sh                       2 GB at 150 MB/s, qnam and socket
#   scripts/slow-client.sh --size 500000000 --rate 50 --transport socket
#
# Options: --size BYTES (default 2000000000), --rate MB/s the client reads at (default 150),
#          --transport qnam|socket|both (default both), --max-rss MiB (default 100),
#          --build DIR (a configured build dir; default $SLP_BUILD_DIR or build/).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
size=2000000000
rate=150
transports=(qnam socket)
max_rss=100
build="${SLP_BUILD_DIR:-$here/build}"
while [ $# -gt 0 ]; do
    case "$1" in
    --size) size="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --transport) [ "$2" = both ] && transports=(qnam socket) || transports=("$2"); shift 2 ;;
    --max-rss) max_rss="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "slow-client: unknown argument $1" >&2; exit 2 ;;
    esac
done

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$here" -B "$build" >/dev/null
fi
cmake --build "$build" --parallel "$(nproc)" --target slp mock_upstream >/dev/null
work="$(mktemp -d /tmp/slp-slow-client.XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=scripts/lib.sh
. "$here/scripts/lib.sh"

"$build/tests/mock_upstream/mock_upstream" --listen 127.0.0.1:0 >"$work/mock.out" 2>&1 &
pids+=($!)
mock_port="$(wait_listening "$work/mock.out")"

status=0
for transport in "${transports[@]}"; do
    cat >"$work/slp.yaml" <<YAML
listen: "127.0.0.1:0"
upstream_transport: $transport
backends:
  - name: mock
    url: http://127.0.0.1:$mock_port
    model: mock-upstream
    timeout: 30s
YAML
    "$build/daemon/slp" --config "$work/slp.yaml" 2>"$work/slp-$transport.err" &
    slp_pid=$!
    pids+=("$slp_pid")
    port="$(wait_listening "$work/slp-$transport.err")"
    echo "== $transport: $size bytes to a client reading at $rate MB/s"
    # The client: a small receive buffer and a paced read loop; prints bytes, seconds and the
    # RSS series it sampled from /proc (once a second).
    python3 - "$port" "$size" "$rate" "$slp_pid" <<'PY' | tee "$work/result-$transport"
import socket, sys, time
port, size, rate, pid = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def rss_mib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return -1
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 * 1024)
s.connect(("127.0.0.1", port))
body = b'{"model":"mock"}'
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"X-Mock-Large-Response: " + str(size).encode() + b"\r\nContent-Length: " +
          str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
head = b""
while b"\r\n\r\n" not in head:
    chunk = s.recv(65536)
    if not chunk:
        sys.exit("no response head")
    head += chunk
head, got = head.split(b"\r\n\r\n", 1)
got = len(got)
start = last = time.time()
series = [rss_mib()]
while got < size:
    chunk = s.recv(64 * 1024)
    if not chunk:
        break
    got += len(chunk)
    now = time.time()
    ahead = got / (rate * 1e6) - (now - start)  # paced: never faster than the rate
    if ahead > 0:
        time.sleep(ahead)
    if now - last >= 1:
        last = now
        series.append(rss_mib())
elapsed = time.time() - start
series.append(rss_mib())
status_line = head.split(b"\r\n")[0].decode()
print(f"status line: {status_line}")
print(f"received {got} of {size} bytes in {elapsed:.1f} s ({got / elapsed / 1e6:.0f} MB/s)")
print("slp RSS MiB per second:", " ".join(map(str, series)))
print(f"peak {max(series)} MiB")
PY
    kill "$slp_pid" 2>/dev/null || true
    wait "$slp_pid" 2>/dev/null || true
    got="$(sed -n 's/^received \([0-9]*\) of.*/\1/p' "$work/result-$transport")"
    peak="$(sed -n 's/^peak \([0-9]*\) MiB/\1/p' "$work/result-$transport")"
    if [ "${got:-0}" != "$size" ]; then
        echo "FAIL $transport: the body did not arrive whole"; status=1
    elif [ "${peak:-9999}" -gt "$max_rss" ]; then
        echo "FAIL $transport: peak RSS ${peak} MiB > ${max_rss} MiB"; status=1
    else
        echo "ok $transport: ${size} bytes, peak RSS ${peak} MiB"
    fi
done
exit "$status"
