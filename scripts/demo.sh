#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds SLP and runs it on a built-in demo: two mock vLLM backends on loopback, a config with
# a discovered backend, a pinned one and an edition; then sends real requests through it with
# curl and leaves SLP serving on 127.0.0.1:${SLP_DEMO_PORT:-8080} until Ctrl-C, with a list of
# commands to try.
# SLP_DEMO_ONESHOT=1 runs those suggested commands too, instead of waiting, and exits non-zero
# when any request (a sample or a suggestion) gets an unexpected HTTP status or answer (CI
# runs it this way).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_BUILD_DIR:-$here/build}"
port="${SLP_DEMO_PORT:-8080}"
oneshot="${SLP_DEMO_ONESHOT:-0}"

"$here/scripts/install-deps.sh" demo
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
    [ -n "$mock_port" ] || { echo "demo: mock backend $1 did not start" >&2; cat "$work/$1.out" >&2; exit 1; }
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
base="http://127.0.0.1:$port"
up=0
for _ in $(seq 50); do
    # Our slp, not some other server on the port: it must still be running.
    kill -0 "$slp_pid" 2>/dev/null || break
    if curl -fsS "$base/healthz" >/dev/null 2>&1; then up=1 && break; fi
    sleep 0.1
done
if [ "$up" != 1 ] || ! kill -0 "$slp_pid" 2>/dev/null; then
    echo "demo: slp did not start on $base (is port $port taken? SLP_DEMO_PORT=N picks another)" >&2
    exit 1
fi
sleep 0.5 # let discovery make its first probe

# run_request TITLE STATUS PATTERN COMMAND: prints the command, runs it as printed (curl
# options added after it only save the body and report the status), shows the answer, and
# checks the status and that the answer matches PATTERN (grep -E; several joined by && must
# all match).
failures=0
checked=0
run_request() {
    local title=$1 want=$2 pattern=$3 cmd=$4 status p
    echo
    echo "== $title"
    echo "\$ $cmd"
    status=$(eval "$cmd -o \"\$work/answer\" -w '%{http_code}'") || status="curl-failed:$?"
    cat "$work/answer" 2>/dev/null || true
    echo
    checked=$((checked + 1))
    if [ "$status" != "$want" ]; then
        echo "demo: FAIL: HTTP $status, expected $want: $cmd" >&2
        failures=$((failures + 1))
    else
        while IFS= read -r p; do
            if ! grep -qE -- "$p" "$work/answer"; then
                echo "demo: FAIL: the answer does not match /$p/: $cmd" >&2
                failures=$((failures + 1))
                break
            fi
        done <<<"${pattern//&&/$'\n'}"
    fi
    rm -f "$work/answer"
}

run_request "GET /v1/models?debug: what each id resolves to (discovered, pinned, edition)" \
    200 '"id":"qwen3-8b-batch"' \
    "curl -sS '$base/v1/models?debug'"
run_request "POST /v1/chat/completions, model qwen3-8b (renamed upstream to Qwen3-8B-AWQ)" \
    200 '"object":"chat.completion"&&"model":"Qwen3-8B-AWQ"' \
    "curl -sS $base/v1/chat/completions -H 'Content-Type: application/json' -d '{\"model\":\"qwen3-8b\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'"
run_request "the same, streamed from the pinned backend: SSE events arrive as the backend sends them" \
    200 '^data: \[DONE\]' \
    "curl -sS -N $base/v1/chat/completions -H 'Content-Type: application/json' -H 'X-Mock-Event-Interval-Ms: 150' -d '{\"model\":\"llama-70b\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}'"
run_request "an unknown model gets a clear 404, from SLP itself" \
    404 '"code":"model_not_found"' \
    "curl -sS $base/v1/chat/completions -d '{\"model\":\"gpt-9\"}'"

# What the demo suggests trying by hand. Each one is checked by SLP_DEMO_ONESHOT=1.
suggestions=(
    "the edition qwen3-8b-batch: the backend streams (aggregate), you get one JSON answer|200|^\\{.*\\}$&&\"object\":\"chat.completion\"&&\"model\":\"Qwen3-8B-AWQ\"|curl -sS $base/v1/chat/completions -H 'Content-Type: application/json' -d '{\"model\":\"qwen3-8b-batch\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'"
    "an edition streamed: a client asking for a stream gets the stream|200|^data: \[DONE\]|curl -sS -N $base/v1/chat/completions -H 'Content-Type: application/json' -d '{\"model\":\"llama-70b-batch\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}'"
    "the route table as clients see it|200|\"object\":\"list\"|curl -sS $base/v1/models"
    "Prometheus metrics, requests counted per id and status|200|^slp_requests_total\\{|curl -sS $base/metrics"
    "the health check|200|.|curl -sS $base/healthz"
)

echo
if [ "$oneshot" = "1" ]; then
    echo "== SLP_DEMO_ONESHOT=1: running every command the demo suggests"
    for s in "${suggestions[@]}"; do
        IFS='|' read -r title want pattern cmd <<<"$s"
        run_request "$title" "$want" "$pattern" "$cmd"
    done
    echo
    if [ "$failures" != 0 ]; then
        echo "demo: $failures of $checked requests failed"
        exit 1
    fi
    echo "demo done: $checked requests, all answered as expected"
    exit 0
fi
if [ "$failures" != 0 ]; then
    echo "demo: $failures of $checked sample requests failed (see above)"
fi
echo "SLP is serving on $base (backends on ports $port_a and $port_b). Try:"
for s in "${suggestions[@]}"; do
    IFS='|' read -r title _ _ cmd <<<"$s"
    echo "  # $title"
    echo "  $cmd"
done
echo "Ctrl-C stops everything."
wait "$slp_pid"
