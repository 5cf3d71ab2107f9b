#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# SLP's container image (installer/container/Containerfile), built from this checkout with
# podman and run for real: a config mounted read-only, a mock vLLM on the host, host network.
# Prints and checks, in order:
#   the build time; the image's size over its base (at most 80 MiB); the version label equal
#   to `slp --version` inside;
#   the image's own config refused, saying where yours goes; `--check` on a bad config exits
#   non-zero with the error line, on the good one prints the route table;
#   a request discovered (?debug says "discovered"), renamed and answered; a stream to
#   `data: [DONE]`; `id -u` inside is not 0; `podman healthcheck run` passes on the port the
#   config names;
#   SIGHUP reloads and leaves no zombie, nor does an orphan of `podman exec` (tini reaps it);
#   `podman stop` during a stream: the drain logged, the stream finished, exit code 0.
# Podman 4.3 on Debian 12 as CI runs it: runc with cgroupfs (crun fails on hybrid cgroups), no
# default ulimits (CONTAINERS_CONF), no registry: the base, debian:bookworm-slim, is made here
# once from a minbase debootstrap (the package test's root, installer/make-test-chroot.sh, when
# it exists) and kept in podman's store; builds run with --pull=never --network=host (apt in
# the build reaches the Debian mirror this machine's apt uses).
# The base and the two images it tags (localhost/slp-ctest:build and :latest, about 1.3 GB)
# stay in podman's store as the next run's cache; each run removes the ones it replaced.
# Exits 77 (ctest: skipped) with the reason without root, podman, runc, curl or python3.
#
#   SLP_SOURCE_DIR=... SLP_MOCK_BIN=... tests/container/image.sh
set -euo pipefail
started=$(date +%s)
skip() {
    echo "container: SKIP: $*"
    exit 77
}
fail() {
    echo "container: FAIL: $*"
    exit 1
}
step() { echo "== $* =="; }
src=${SLP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -x "${SLP_MOCK_BIN:-}" ] || {
    echo "container: set SLP_MOCK_BIN (ctest does)" >&2
    exit 1
}
[ "$(id -u)" -eq 0 ] || skip "podman with runc and cgroupfs, as CI runs it, needs root"
for tool in podman runc curl python3; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/install-deps.sh test installs it)"
done

base=docker.io/library/debian:bookworm-slim
repo=localhost/slp-ctest
image=$repo:latest
max_mib=80
tmp=$(mktemp -d /var/tmp/slp-container.XXXXXX)
chmod 755 "$tmp"
printf '[containers]\ndefault_ulimits = []\n' >"$tmp/containers.conf"
export CONTAINERS_CONF=$tmp/containers.conf
pod() { podman --runtime runc --cgroup-manager=cgroupfs "$@"; }

containers=()
pids=()
cleanup() {
    local rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
        for c in "${containers[@]}"; do
            echo "--- podman logs $c (last 30 lines)"
            pod logs "$c" 2>&1 | tail -n 30 || true
        done
        [ -s "$tmp/mock.log" ] && { echo "--- mock"; tail -n 10 "$tmp/mock.log"; }
    fi
    for c in "${containers[@]}"; do pod rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf --one-file-system "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs `command...` every 0.2 s until it succeeds or `seconds` pass.
wait_until() {
    local end=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.2
    done
}
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
# The container's log (slp writes to stderr; podman keeps both streams).
logs() { pod logs "$1" 2>&1; }
# (Captured first: with pipefail, grep -q leaving early could fail the pipeline with SIGPIPE.)
logs_have() {
    local text
    text=$(logs "$1")
    grep -qF -- "$2" <<<"$text"
}

# ---- the base -------------------------------------------------------------------------------
# A stand-in for the registry's debian:bookworm-slim: a minbase root of the same release,
# imported once. The package test's root is one already (minus what it downloaded); without
# it, make-test-chroot.sh makes one here from this machine's Debian mirror.
make_base() {
    local root chroot_dir=${SLP_TEST_CHROOT:-/var/cache/slp-test-chroot/bookworm}
    local t0
    t0=$(date +%s)
    if [ -x "$chroot_dir/bin/sh" ]; then
        root=$chroot_dir
        echo "base: importing the package test's root $chroot_dir (without its apt lists and .debs)"
    else
        command -v debootstrap >/dev/null 2>&1 ||
            skip "no $base in podman's store, and no debootstrap to make one"
        root=$tmp/bookworm
        echo "base: no $chroot_dir; making a minbase root (installer/make-test-chroot.sh)"
        "$src/installer/make-test-chroot.sh" "$root" || fail "make-test-chroot.sh $root"
    fi
    tar -C "$root" --exclude='./var/lib/apt/lists/*' --exclude='./var/cache/apt/archives/*.deb' \
        --exclude='./var/cache/apt/*.bin' -c . | pod import - "$base" >"$tmp/import.log" 2>&1 ||
        { cat "$tmp/import.log"; fail "podman import of $root"; }
    echo "base: $base made in $(($(date +%s) - t0)) s"
}
# Unpacking a layer makes / a private mount first, which fails where / is not a mount point
# (a plain chroot, as in a fresh debootstrap root): podman cannot work there at all. An empty
# layer finds out in a second; any other failure of it is a failure of the test.
probe=localhost/slp-ctest-probe:latest
if ! tar -C "$tmp" -c --files-from=/dev/null | pod import - "$probe" >"$tmp/probe.log" 2>&1; then
    grep -q 'remount /' "$tmp/probe.log" &&
        skip "podman cannot unpack a layer here: / is not a mount point (a plain chroot?): $(grep -m1 -o 'remount /[^)]*' "$tmp/probe.log")"
    cat "$tmp/probe.log"
    fail "podman import of an empty layer"
fi
pod rmi -f "$probe" >/dev/null 2>&1 || true

step "base image"
if pod image exists "$base"; then
    echo "base: $base, kept in podman's store from an earlier run"
else
    make_base
fi

# ---- build ----------------------------------------------------------------------------------
step "build (installer/container/Containerfile)"
version=$(sed -n 's/^project(slp VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(slp VERSION ...) in $src/CMakeLists.txt"
old_ids=()
for tag in build latest; do
    id=$(pod image inspect --format '{{.Id}}' "$repo:$tag" 2>/dev/null) && old_ids+=("$id")
done
build=(build --format docker --pull=never --network=host --build-arg "SLP_VERSION=$version"
    -f "$src/installer/container/Containerfile")
t0=$(date +%s)
# The build stage is tagged too, so the run after a change can remove what it replaced.
if ! pod "${build[@]}" --target build -t "$repo:build" "$src" >"$tmp/build.log" 2>&1 ||
    ! pod "${build[@]}" -t "$image" "$src" >>"$tmp/build.log" 2>&1; then
    tail -n 40 "$tmp/build.log"
    fail "podman build"
fi
echo "build: $(($(date +%s) - t0)) s (SLP_VERSION=$version; layers cached from earlier runs are reused)"
for id in "${old_ids[@]}"; do
    pod image inspect --format '{{.RepoTags}}' "$id" 2>/dev/null | grep -q "$repo" ||
        pod rmi "$id" >/dev/null 2>&1 || true
done

step "size"
size=$(pod image inspect --format '{{.Size}}' "$image")
base_size=$(pod image inspect --format '{{.Size}}' "$base")
over=$((size - base_size))
echo "size: image $(mib "$size"), base $(mib "$base_size"), over the base $(mib "$over") (at most $max_mib MiB)"
[ "$over" -le $((max_mib * 1048576)) ] || fail "the image adds more than $max_mib MiB to its base"

step "labels"
label() { pod image inspect --format "{{index .Labels \"org.opencontainers.image.$1\"}}" "$image"; }
inside=$(pod run --rm "$image" --version 2>/dev/null)
echo "version label: $(label version); slp --version inside: $inside"
[ "$inside" = "slp $(label version)" ] || fail "the version label is not what slp --version says"
echo "licenses: $(label licenses); title: $(label title)"
[ "$(label licenses)" = GPL-3.0-or-later ] || fail "licenses label"

# ---- configs --------------------------------------------------------------------------------
step "configs"
mock_port=""
"$SLP_MOCK_BIN" --listen 127.0.0.1:0 --models Qwen3-8B-AWQ >"$tmp/mock.log" 2>&1 &
pids+=($!)
mock_listening() {
    mock_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/mock.log" 2>/dev/null)
    [ -n "$mock_port" ]
}
wait_until 10 mock_listening || fail "the mock upstream did not start"
port=$(free_port)
# Not 8080: the health check must find the port in the config.
cat >"$tmp/slp.yaml" <<YAML
listen: "127.0.0.1:$port"
shutdown_grace: 10s
log_requests: true
backends:
  - name: qwen3-8b                  # unpinned: slp asks the mock for its model's name
    url: http://127.0.0.1:$mock_port
YAML
printf 'listen: ":8080"\nbackend:\n  - name: x\n' >"$tmp/bad.yaml"
chmod 644 "$tmp/slp.yaml" "$tmp/bad.yaml"
config_volume() { echo "$tmp/$1:/etc/slp/slp.yaml:ro"; }
# What slp printed in a one-shot container, without podman's own lines: where systemd is not
# PID 1 it logs that it cannot set up the image's health-check timer.
show() { grep -v '^time="[^"]*" level=' <<<"$1" | sed 's/^/  | /'; }

set +e
out=$(pod run --rm "$image" 2>&1)
rc=$?
set -e
echo "no config mounted: exit $rc"
show "$out"
[ "$rc" -ne 0 ] && grep -q "mounted at /etc/slp/slp.yaml" <<<"$out" ||
    fail "without a mounted config slp must refuse and say where the config goes"
set +e
out=$(pod run --rm -v "$(config_volume bad.yaml)" "$image" --check 2>&1)
rc=$?
set -e
echo "--check on a bad config: exit $rc"
show "$out"
[ "$rc" -ne 0 ] && grep -q '^/etc/slp/slp.yaml:2:1: unknown key "backend"' <<<"$out" ||
    fail "--check on a bad config"
out=$(pod run --rm -v "$(config_volume slp.yaml)" "$image" --check 2>&1) ||
    fail "--check on the good config: $out"
echo "--check on the good config: exit 0"
show "$out"

# ---- serving --------------------------------------------------------------------------------
step "serve"
name=slp-ctest-$$
containers+=("$name")
# With the hardening docs/OPERATE.md suggests: slp needs no capability and writes nothing.
pod run -d --name "$name" --network=host --read-only --cap-drop=ALL \
    --security-opt no-new-privileges -v "$(config_volume slp.yaml)" "$image" >/dev/null 2>>"$tmp/podman.log" ||
    { cat "$tmp/podman.log"; fail "podman run"; }
wait_until 30 logs_have "$name" "listening on 127.0.0.1:$port" || fail "slp did not start listening"
url=http://127.0.0.1:$port
echo "slp serves $url in container $name"
discovered() {
    local catalog
    catalog=$(curl -fsS --max-time 2 "$url/v1/models?debug" 2>/dev/null) &&
        grep -q '"discovery":"discovered"' <<<"$catalog"
}
wait_until 20 discovered || fail "qwen3-8b was not discovered: $(curl -sS "$url/v1/models?debug")"
echo "discovered: $(curl -sS "$url/v1/models?debug" | grep -o '"upstream_model":"[^"]*","discovery":"[^"]*"')"

chat() { # extra curl arguments, then the body's "stream" value
    curl -sSN --max-time 20 "$url/v1/chat/completions" -H 'Content-Type: application/json' "${@:1:$#-1}" \
        -d "{\"model\":\"qwen3-8b\",\"stream\":${!#},\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}"
}
answer=$(chat false)
echo "answer: $(grep -o '"model":"[^"]*"' <<<"$answer" | head -n 1), $(grep -o '"content":"[^"]*"' <<<"$answer" | tail -n 1)"
grep -q '"model":"Qwen3-8B-AWQ"' <<<"$answer" || fail "the request was not renamed and answered: $answer"
wait_until 5 logs_have "$name" 'qwen3-8b as "Qwen3-8B-AWQ"' || fail "no request line in the log"
echo "log: $(logs "$name" | grep -F 'qwen3-8b as "Qwen3-8B-AWQ"' | head -n 1)"
stream=$(chat true)
events=$(grep -c '^data: ' <<<"$stream" || true)
last=$(grep '^data: ' <<<"$stream" | tail -n 1)
echo "stream: $events events, the last: $last"
[ "$last" = "data: [DONE]" ] || fail "the stream did not end with data: [DONE]"

step "user and health"
uid=$(pod exec "$name" id -u)
echo "id -u inside: $uid ($(pod exec "$name" id -un))"
[ "$uid" != 0 ] || fail "slp runs as root"
pod healthcheck run "$name" 2>>"$tmp/podman.log" || fail "podman healthcheck run"
echo "podman healthcheck run: healthy"
echo "the check itself: $(pod exec "$name" /usr/bin/slp --health-check --config /etc/slp/slp.yaml)"

step "reload and PID 1"
reloads() { logs "$name" | grep -c '^reload: 1 routes' || true; }
before=$(reloads)
pod kill -s HUP "$name" >/dev/null
reloaded() { [ "$(reloads)" -gt "$before" ]; }
wait_until 15 reloaded || fail "SIGHUP: no reload line"
echo "SIGHUP: $(logs "$name" | grep '^reload: 1 routes' | tail -n 1)"
# What tini is there for: a process left behind by `podman exec` is reparented to PID 1.
pod exec "$name" sh -c 'sleep 0.2 & exit 0'
processes() { pod exec "$name" sh -c 'cat /proc/[0-9]*/stat' | awk '{ print $1, $2, $3 }'; }
no_zombie() { ! processes | awk '$3 == "Z" { found = 1 } END { exit !found }'; }
wait_until 5 no_zombie || { processes; fail "a zombie stays in the container"; }
echo "after the reload and an orphaned sleep, no zombie (pid comm state):"
processes | sed 's/^/  | /'
pid1=$(processes | awk '$1 == 1 { print $2 }')
[ "$pid1" = "(tini)" ] || fail "PID 1 is $pid1, not tini"

step "stop during a stream"
chat -H 'X-Mock-Events: 10' -H 'X-Mock-Event-Interval-Ms: 300' true >"$tmp/stream.out" 2>&1 &
stream_pid=$!
pids+=("$stream_pid")
wait_until 10 grep -q '^data: ' "$tmp/stream.out" || fail "the stream did not begin"
t0=$(date +%s%3N)
pod stop -t 30 "$name" >/dev/null 2>>"$tmp/podman.log" || fail "podman stop"
stop_ms=$(($(date +%s%3N) - t0))
wait_until 10 sh -c "! kill -0 $stream_pid 2>/dev/null" || fail "the stream is still open"
code=$(pod inspect --format '{{.State.ExitCode}}' "$name")
echo "podman stop: $stop_ms ms, exit code $code"
logs "$name" | grep -E 'draining|drained|cutting' | sed 's/^/  | /'
echo "the stream in flight: $(grep -c '^data: ' "$tmp/stream.out" || true) events, the last: $(grep '^data: ' "$tmp/stream.out" | tail -n 1)"
[ "$code" = 0 ] || fail "exit code $code after podman stop"
logs_have "$name" "draining in-flight requests for up to 10s" && logs_have "$name" "drained; exiting" ||
    fail "the drain is not in the log"
[ "$(grep '^data: ' "$tmp/stream.out" | tail -n 1)" = "data: [DONE]" ] || fail "the drain cut the stream"

echo
echo "container: ok in $(($(date +%s) - started)) s"
