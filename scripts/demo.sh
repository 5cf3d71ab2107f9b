#!/usr/bin/env bash
# Builds SLP and runs it on a built-in demo: two mock vLLM backends on loopback, a config with
# a discovered backend, a pinned one and an edition; then sends real requests through it with
# curl and leaves SLP serving on 127.0.0.1:${SLP_DEMO_PORT:-8080} until Ctrl-C.
# SLP_DEMO_ONESHOT=1 stops after the sample requests (CI uses it).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_BUILD_DIR:-$here/build}"
port="${SLP_DEMO_PORT:-8080}"

"$here/scripts/install-deps.sh"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLP_BUILD_TESTS=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target slp mock_upstream

work="$(mktemp -d)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Starts a mock backend in this shell (not in a $(...) subshell, so its pid reaches cleanup)
# and sets mock_port.
start_mock() { # name, models
    "$build/tests/mock_upstream/mock_upstream" --listen 127.0.0.1:0 --models "$2" >"$work/$1.out" 2>&1 &
    pids+=($!)
    for _ in $(seq 50); do
        if grep -q '^listening on' "$work/$1.out"; then break; fi
        sleep 0.1
    done
    mock_port="$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/$1.out")"
}
start_mock a Qwen3-8B-AWQ
port_a="$mock_port"
start_mock b Llama-3.3-70B-Instruct-AWQ,Llama-3.2-1B-Instruct
port_b="$mock_port"

sed -e "s/@SLP_PORT@/$port/" -e "s/@MOCK_A_PORT@/$port_a/" -e "s/@MOCK_B_PORT@/$port_b/" \
    "$here/resources/demo/slp-demo.yaml.in" >"$work/slp.yaml"

echo "== slp --check: the route table compiled from the demo config"
"$build/daemon/slp" --check --config "$work/slp.yaml"

"$build/daemon/slp" --config "$work/slp.yaml" 2> >(sed 's/^/  slp| /' >&2) &
slp_pid=$!
pids+=("$slp_pid")
for _ in $(seq 50); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
sleep 0.5 # let discovery make its first probe

base="http://127.0.0.1:$port"
echo
echo "== GET /v1/models?debug: what each id resolves to (discovered, pinned, passthrough)"
curl -sS "$base/v1/models?debug"
echo
echo "== POST /v1/chat/completions, model qwen3-8b (renamed upstream to Qwen3-8B-AWQ)"
curl -sS "$base/v1/chat/completions" -H 'Content-Type: application/json' \
    -d '{"model":"qwen3-8b","messages":[{"role":"user","content":"Hello"}]}'
echo
echo
echo "== the same, streamed: SSE events arrive as the backend sends them"
curl -sS -N "$base/v1/chat/completions" -H 'Content-Type: application/json' \
    -H 'X-Mock-Event-Interval-Ms: 150' \
    -d '{"model":"llama-70b","stream":true,"messages":[{"role":"user","content":"Hi"}]}'
echo
echo "== an unknown model gets a clear 404"
curl -sS "$base/v1/chat/completions" -d '{"model":"gpt-9"}'
echo
echo

if [ "${SLP_DEMO_ONESHOT:-0}" = "1" ]; then
    echo "demo done"
    exit 0
fi
echo "SLP is serving on $base (backends on ports $port_a and $port_b). Try:"
echo "  curl -sS $base/v1/chat/completions -d '{\"model\":\"qwen3-8b-edited\",\"stream\":true}'"
echo "  curl -sS $base/metrics"
echo "Ctrl-C stops everything."
wait "$slp_pid"
