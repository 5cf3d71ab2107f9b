#!/usr/bin/env bash
# Takes docs/monitor-tray.png: slp-monitor's tray menu, its window (traffic columns, the
# sparkline, the hour's broken answers, and the details pane explaining the failing route)
# and the notifications, on a desktop of the script's own (Xvfb + tint2's tray + dunst on a
# private D-Bus session), with the real slp in front of mock upstreams:
#   qwen3-8b      discovered from mock A, ok, carrying traffic (and its -edited edition)
#   llama-70b     discovered from mock B, which then starts serving two models: ambiguous
#   mistral-small pinned with its context_length from the config, ok, carrying traffic with a
#                 few 503s from the backend
#   gemma-27b     pointing at a closed port: pending with probe errors
#   phi-4         pinned on mock C, carrying traffic until mock C goes away: its requests
#                 are refused, SLP calls it failing, and the details pane explains why
#   deepseek-r1   pinned on mock D with a 300ms stream_idle_timeout; three streams pause
#                 mid-body: stalled, three broken answers (idle timeout)
# Usage: scripts/monitor-screenshot.sh [OUTPUT.png]   (SLP_BUILD_DIR picks the build tree)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_BUILD_DIR:-$here/build}"
out="${1:-$here/docs/monitor-tray.png}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

# One private session bus for dunst and the monitor, gone when the script ends.
if [ -z "${SLP_SCREENSHOT_IN_SESSION:-}" ]; then
    "$here/scripts/install-deps.sh" test
    cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" --parallel "$(nproc)" --target slp mock_upstream slp-monitor
    SLP_SCREENSHOT_IN_SESSION=1 SLP_BUILD_DIR="$build" exec dbus-run-session -- "$0" "$out"
fi

work="$(mktemp -d)"
pids=()
cleanup() {
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

wait_for() { # file, pattern: up to 10 s
    for _ in $(seq 100); do
        if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "monitor-screenshot: timed out waiting for '$2' in $1" >&2
    cat "$1" >&2 || true
    return 1
}

# The desktop. -noreset keeps the root property tint2 needs once the last client leaves.
Xvfb -displayfd 5 -screen 0 1700x1000x24 -noreset -nolisten tcp 5>"$work/display" 2>"$work/xvfb.log" &
pids+=($!)
wait_for "$work/display" '[0-9]'
export DISPLAY=":$(head -n1 "$work/display")"
# Without a window manager tint2 waits 15 s unless the desktop count is set.
xprop -root -f _NET_NUMBER_OF_DESKTOPS 32c -set _NET_NUMBER_OF_DESKTOPS 1

cat >"$work/tint2rc" <<'EOF'
rounded = 0
border_width = 0
background_color = #263238 100
border_color = #263238 100
panel_items = S
panel_size = 100% 32
panel_padding = 4 2 4
panel_position = bottom right horizontal
panel_background_id = 1
wm_menu = 0
autohide = 0
systray_padding = 4 2 6
systray_icon_size = 24
EOF
tint2 -c "$work/tint2rc" >"$work/tint2.log" 2>&1 &
pids+=($!)
wait_for "$work/tint2.log" 'systray started'

cat >"$work/dunstrc" <<'EOF'
[global]
    font = DejaVu Sans 10
    width = 420
    offset = 12x12
    frame_width = 2
[urgency_normal]
    timeout = 0
[urgency_critical]
    background = "#37474f"
    foreground = "#ffffff"
    frame_color = "#c62828"
    timeout = 0
EOF
dunst -config "$work/dunstrc" >"$work/dunst.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null |
        grep -q true && break
    sleep 0.1
done

start_mock() { # name, models; sets mock_port (not $(...): pids must reach the cleanup)
    "$build/tests/mock_upstream/mock_upstream" --listen 127.0.0.1:0 --models "$2" >"$work/$1.out" 2>&1 &
    pids+=($!)
    wait_for "$work/$1.out" '^listening on'
    mock_port="$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/$1.out")"
}
start_mock a Qwen/Qwen3-8B-AWQ
port_a="$mock_port"
start_mock b meta-llama/Llama-3.3-70B-Instruct
port_b="$mock_port"
start_mock c microsoft/phi-4
port_c="$mock_port"
pid_c="${pids[-1]}"
start_mock d deepseek-ai/DeepSeek-R1-Distill-Qwen-7B
port_d="$mock_port"

cat >"$work/slp.yaml" <<EOF
listen: "127.0.0.1:0"
discovery:
  backoff_initial: 200ms
  backoff_max: 1s
  recheck: 500ms
backends:
  - name: qwen3-8b
    url: http://127.0.0.1:$port_a
    timeout: 120s
    aggregate: true
  - name: llama-70b
    url: http://127.0.0.1:$port_b
  - name: mistral-small
    url: http://127.0.0.1:$port_a
    model: mistralai/Mistral-Small-3.1-24B
    context_length: 131072
    retry: true
  - name: gemma-27b
    url: http://127.0.0.1:9
  - name: phi-4
    url: http://127.0.0.1:$port_c
    model: microsoft/phi-4
  - name: deepseek-r1
    url: http://127.0.0.1:$port_d
    model: deepseek-ai/DeepSeek-R1-Distill-Qwen-7B
    stream_idle_timeout: 300ms
editions:
  - suffix: -edited
    url: http://127.0.0.1:$port_a
    model: "{{.Model}}"
    timeout: 300s
    apply_to: ["qwen3-8b"]
EOF
"$build/daemon/slp" --config "$work/slp.yaml" 2>"$work/slp.log" &
pids+=($!)
wait_for "$work/slp.log" '^listening on'
slp_url="http://$(sed -n 's/^listening on \(.*\)$/\1/p' "$work/slp.log")"
wait_for "$work/slp.log" 'llama-70b: backend serves'

mkdir -p "$work/config" "$work/runtime"
chmod 700 "$work/runtime"
QT_QPA_PLATFORM=xcb XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work/runtime" \
    "$build/monitor/slp-monitor" --url "$slp_url" --interval 500ms >"$work/monitor.log" 2>&1 &
pids+=($!)
wait_for "$work/monitor.log" 'first poll'

# Traffic through slp while the monitor polls: the sparkline fills, the columns count.
post() { # model [extra header]
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' ${2:+-H "$2"} \
        -d "{\"model\":\"$1\",\"messages\":[]}" "$slp_url/v1/chat/completions" || true
}
traffic() { # until the script ends
    round=0
    while :; do
        round=$((round + 1))
        for _ in $(seq $((2 + round % 5))); do post qwen3-8b; done
        post mistral-small
        post phi-4
        if [ $((round % 4)) -eq 0 ]; then post mistral-small 'X-Mock-Status: 503'; fi
        sleep 0.25
    done
}
traffic &
pids+=($!)
sleep 10
# deepseek-r1's streams pause mid-body past its stream_idle_timeout: stalled.
for _ in 1 2 3; do
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
        -H 'X-Mock-Pause-After: 2' -H 'X-Mock-Pause-Ms: 3000' \
        -d '{"model":"deepseek-r1","stream":true,"messages":[]}' \
        "$slp_url/v1/chat/completions" || true
done
wait_for "$work/monitor.log" 'notification: SLP: route deepseek-r1 stalled'

# phi-4's backend goes away: the traffic's requests are refused, SLP calls it failing.
kill "$pid_c"
wait_for "$work/monitor.log" 'notification: SLP: backend of phi-4 failing'

# Mock B starts serving two models: llama-70b turns ambiguous, the notification pops up.
curl -fsS -X POST -H 'Content-Type: application/json' \
    -d '{"models":["meta-llama/Llama-3.3-70B-Instruct","meta-llama/Llama-3.2-1B-Instruct"]}' \
    "http://127.0.0.1:$port_b/__mock/models" >/dev/null
wait_for "$work/monitor.log" 'notification: SLP: route llama-70b is ambiguous'

# The tray icon is tint2's first (only) one: left click opens the window, right click the menu.
tray_x=20
tray_y=$((1000 - 16))
xdotool mousemove "$tray_x" "$tray_y" click 1
sleep 1
xdotool mousemove "$tray_x" "$tray_y" click 3
sleep 1
mkdir -p "$(dirname "$out")"
import -window root "$out"
echo "monitor-screenshot: wrote $out"
