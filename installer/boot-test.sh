#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The slp package on a booted clean Debian 12 (check-package.sh runs it):
#   installer/boot-test.sh ROOT SLP_DEB
# An overlay of ROOT (a minbase root from installer/make-test-chroot.sh, which also caches
# systemd) gets systemd-sysv and the .deb through apt, is booted with `systemd-nspawn --boot`
# on a private network, and slp.service must: start through slp.socket (socket activation,
# Type=notify) and answer /healthz, with its STATUS= line in `systemctl status`; reload a good
# config (new routes, same process); reload a bad one (errors logged, still serving the
# previous table); serve a client looping requests across `systemctl restart slp` and across
# an upgrade of the .deb (dpkg -i of the same file again: the maintainer scripts of an
# upgrade) with 0 refused and 0 failed; be restarted by the watchdog when a worker thread is
# wedged (ptrace, from this machine); stop cleanly (exit 0). The root has no procps, so no
# /bin/kill, as a minimal Debian 12 or a container image has none.
# Exit 0: passed; 1: failed; 77: skipped (this machine cannot boot a container; says why).
set -uo pipefail

root_dir=$1
deb=$2
failures=0
fail() {
    echo "FAIL: boot test: $*"
    failures=$((failures + 1))
}
skip() {
    echo "SKIP: boot test: $*"
    exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn, mount)"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn is not installed (apt-get install systemd-container)"
command -v nsenter >/dev/null || skip "nsenter (util-linux) is not installed"
command -v curl >/dev/null || skip "curl is not installed"
[ -x "$root_dir/bin/sh" ] || skip "no Debian 12 root at $root_dir (installer/make-test-chroot.sh makes one)"

started=$(date +%s)
work=$(mktemp -d /var/tmp/slp-boot.XXXXXX)
root=$work/root
nspawn_pid=""
overlay=0
cleanup() {
    if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
        kill -TERM "$nspawn_pid" 2>/dev/null # nspawn asks the container's init to halt
        for _ in $(seq 1 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$nspawn_pid" 2>/dev/null || true
    fi
    wait 2>/dev/null
    if [ "$overlay" = 1 ]; then umount "$root" 2>/dev/null || umount -l "$root" 2>/dev/null || true; fi
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT

mkdir -p "$root" "$work/upper" "$work/work"
if mount -t overlay overlay -o "lowerdir=$root_dir,upperdir=$work/upper,workdir=$work/work" "$root" 2>/dev/null; then
    overlay=1
    echo "(an overlay on $root_dir)"
else
    cp -a "$root_dir/." "$root/"
fi
cp "$deb" "$root/tmp/"
# The upgrade step installs it again once booted, when /tmp is the container's own tmpfs.
cp "$deb" "$root/var/tmp/"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# A key for `headers:`, where the docs say to keep it: the unit's EnvironmentFile, 0600.
boot_key="boot-key-$$-$(date +%s)"
mkdir -p "$root/etc/slp"
install -m 0600 /dev/null "$root/etc/slp/slp.env"
printf '# added by the boot test\nSLP_BOOT_KEY=%s\n' "$boot_key" >"$root/etc/slp/slp.env"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
# systemd-sysv comes from the root's apt cache (make-test-chroot.sh downloaded it); the .deb's
# Depends are resolved by apt as on any clean machine.
if ! in_root apt-get install -y -q --no-install-recommends systemd-sysv >"$work/apt.log" 2>&1 ||
    ! in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" >>"$work/apt.log" 2>&1; then
    tail -n 30 "$work/apt.log"
    fail "apt-get install systemd-sysv and the .deb in the root"
    exit 1
fi
if [ -e "$root/bin/kill" ] || [ -e "$root/usr/bin/kill" ]; then
    fail "the root has a kill binary (procps); the test must run without one"
else
    echo "the root has no /bin/kill (procps is not installed)"
fi
[ -L "$root/etc/systemd/system/multi-user.target.wants/slp.service" ] ||
    fail "the package did not enable slp.service"

# ---- boot -----------------------------------------------------------------------------------
# --register=no --keep-unit: no machined or host D-Bus needed; --private-network: the
# container's 127.0.0.1:8080 (the packaged config's listen) is its own.
machine=slp-boot-$$
boot_started=$(date +%s)
systemd-nspawn --boot --register=no --keep-unit --private-network --console=pipe \
    -M "$machine" -D "$root" >"$work/console.log" 2>&1 &
nspawn_pid=$!
# The container's init: the child of systemd-nspawn in a PID namespace of its own (nspawn's
# first child is a short-lived helper in ours).
own_pidns=$(readlink /proc/self/ns/pid)
leader=""
for _ in $(seq 1 200); do
    kill -0 "$nspawn_pid" 2>/dev/null || break
    for child in $(cat "/proc/$nspawn_pid/task/$nspawn_pid/children" 2>/dev/null); do
        ns=$(readlink "/proc/$child/ns/pid" 2>/dev/null) || continue
        [ "$ns" != "$own_pidns" ] && leader=$child
    done
    [ -n "$leader" ] && break
    sleep 0.1
done
if [ -z "$leader" ]; then
    sleep 0.5
    echo "systemd-nspawn said:"
    sed 's/^/  /' "$work/console.log"
    skip "systemd-nspawn could not boot a container on this machine (above)"
fi
in_ct() { nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
state=""
for _ in $(seq 1 120); do
    state=$(in_ct systemctl is-system-running 2>/dev/null)
    case "$state" in running | degraded) break ;; esac
    kill -0 "$nspawn_pid" 2>/dev/null || break
    sleep 0.5
done
case "$state" in
running | degraded) echo "container booted in $(($(date +%s) - boot_started)) s: $state" ;;
*)
    echo "systemd-nspawn (pid $nspawn_pid, $(kill -0 "$nspawn_pid" 2>/dev/null && echo running || echo exited)) said:"
    sed 's/^/  /' "$work/console.log"
    skip "the container did not finish booting (is-system-running: '${state:-no answer}')"
    ;;
esac
[ "$state" = degraded ] && in_ct systemctl --failed --no-pager

# HTTP into the container's network namespace, with this machine's curl.
http() { # path -> prints the status; the body is in $work/body
    nsenter -t "$leader" -n curl -sS -m 5 -o "$work/body" -w '%{http_code}' "http://127.0.0.1:8080$1" 2>/dev/null
}
journal() { in_ct journalctl -u slp.service --no-pager -o cat; }
wait_journal() { # extended regex, seconds
    for _ in $(seq 1 $((2 * $2))); do
        journal | grep -qE -- "$1" && return 0
        sleep 0.5
    done
    return 1
}
main_pid() { in_ct systemctl show -P MainPID slp.service; }

# ---- start ----------------------------------------------------------------------------------
status=""
for _ in $(seq 1 40); do
    status=$(http /healthz)
    [ "$status" = 200 ] && break
    sleep 0.5
done
echo "systemctl is-active slp: $(in_ct systemctl is-active slp.service), slp.socket: $(in_ct systemctl is-active slp.socket)"
[ "$status" = 200 ] && echo "GET /healthz: 200 $(cat "$work/body")" || fail "GET /healthz after boot: '$status'"
pid=$(main_pid)
echo "MainPID: $pid"
[ "$(in_ct systemctl show -P Type slp.service)" = notify ] || fail "slp.service is not Type=notify"
journal | grep -q "listening on 127.0.0.1:8080 (passed by systemd)" ||
    fail "slp did not serve on the socket slp.socket passed"
# Type=notify: the STATUS= line, as `systemctl status` shows it.
status_line=$(in_ct systemctl status --no-pager slp.service | grep -m1 'Status: ')
echo "systemctl status slp: ${status_line# *}"
grep -qE 'Status: "serving 1 route; 0 ambiguous; (0|1) failing; 0 stalled"' <<<"$status_line" ||
    fail "systemctl status shows no STATUS line from slp"

# ---- reload, good config --------------------------------------------------------------------
cat >>"$root/etc/slp/slp.yaml" <<'EOF'
  # added by the boot test: a pinned second backend
  - name: reloaded-model
    url: http://127.0.0.1:8001
    model: Reloaded-Model
    headers: {Authorization: "Bearer ${SLP_BOOT_KEY}"}
EOF
if in_ct systemctl reload slp.service; then echo "systemctl reload slp (good config): ok"; else fail "systemctl reload slp (good config): exit $?"; fi
wait_journal "^reload: [0-9]+ routes from /etc/slp/slp.yaml" 10 || fail "no 'reload: N routes' line after the good reload"
status=$(http /v1/models)
grep -q '"reloaded-model"' "$work/body" && echo "GET /v1/models: $status, has reloaded-model" ||
    fail "after the good reload /v1/models lacks reloaded-model ($status: $(cat "$work/body"))"
[ "$(main_pid)" = "$pid" ] || fail "the reload restarted slp (MainPID $pid -> $(main_pid))"
# The reload compiled ${SLP_BOOT_KEY}: the unit read /etc/slp/slp.env. The dump names the
# header; the key itself is nowhere in the journal.
journal | grep -q "reloaded-model.* headers=Authorization" && echo "slp.env read: reloaded-model sets headers=Authorization" ||
    fail "no 'headers=Authorization' dump line for reloaded-model (was /etc/slp/slp.env read?)"
journal | grep -qF "$boot_key" && fail "the key from slp.env appears in the journal"

# ---- reload, bad config ---------------------------------------------------------------------
cp "$root/etc/slp/slp.yaml" "$work/good.yaml"
printf 'listen: "127.0.0.1:8080"\nbackends:\n  - name: broken\n    url: not-a-url\n    tiemout: 5s\n' >"$root/etc/slp/slp.yaml"
if in_ct systemctl reload slp.service; then echo "systemctl reload slp (bad config): ok"; else fail "systemctl reload slp (bad config): exit $?"; fi
wait_journal "still serving the previous config" 10 || fail "no 'still serving the previous config' line after the bad reload"
status=$(http /healthz)
[ "$status" = 200 ] && echo "GET /healthz after the bad reload: 200" || fail "GET /healthz after the bad reload: '$status'"
status=$(http /v1/models)
grep -q '"reloaded-model"' "$work/body" && echo "GET /v1/models: $status, still the previous table" ||
    fail "after the bad reload /v1/models changed ($status: $(cat "$work/body"))"
[ "$(in_ct systemctl is-active slp.service)" = active ] || fail "slp.service is not active after the bad reload"
[ "$(main_pid)" = "$pid" ] || fail "the bad reload restarted slp"
journal | grep -q "Failed to locate executable" && fail "systemd could not run ExecReload"
cp "$work/good.yaml" "$root/etc/slp/slp.yaml"

# ---- restart and upgrade under load ---------------------------------------------------------
# Clients loop GET /healthz (a new connection each) while slp.service restarts, then while
# the same .deb is installed again (postinst restarts slp.service; slp.socket keeps the
# listening socket, so connections wait in its queue). curl exit 7 is a refused connection.
loop_dir=$work/loop
mkdir -p "$loop_dir"
: >"$loop_dir/results"
client_loop() {
    while [ ! -e "$loop_dir/stop" ]; do
        code=$(nsenter -t "$leader" -n curl -sS -m 20 -o /dev/null -w '%{http_code}' \
            http://127.0.0.1:8080/healthz 2>>"$loop_dir/errors")
        echo "$? $code" >>"$loop_dir/results"
    done
}
# Three clients at once, so connections are in every state when slp stops: queued, just
# accepted, mid-request.
loop_pids=()
for _ in 1 2 3; do
    client_loop &
    loop_pids+=($!)
done
loop_count() { wc -l <"$loop_dir/results"; }
wait_requests() { # at least N more results than now
    local want=$(($(loop_count) + $1))
    for _ in $(seq 1 100); do [ "$(loop_count)" -ge "$want" ] && return 0; sleep 0.1; done
    return 1
}
wait_requests 20 || fail "the client loop is not running"
before=$(main_pid)
in_ct systemctl restart slp.service || fail "systemctl restart slp: exit $?"
after_restart=$(main_pid)
wait_requests 20
echo "systemctl restart slp: MainPID $before -> $after_restart"
[ "$after_restart" != "$before" ] || fail "systemctl restart did not restart slp"
in_ct dpkg -i "/var/tmp/$(basename "$deb")" >"$work/upgrade.log" 2>&1 || { cat "$work/upgrade.log"; fail "dpkg -i (upgrade)"; }
after_upgrade=$(main_pid)
wait_requests 20
echo "dpkg -i $(basename "$deb") again (upgrade): MainPID $after_restart -> $after_upgrade"
[ "$after_upgrade" != "$after_restart" ] || fail "the upgrade did not restart slp"
touch "$loop_dir/stop"
wait "${loop_pids[@]}"
total=$(loop_count)
refused=$(awk '$1 == 7' "$loop_dir/results" | wc -l)
failed=$(awk '$1 != 0 || $2 != 200' "$loop_dir/results" | wc -l)
echo "client loop across restart and upgrade: $total requests, $refused refused, $failed failed"
[ "$refused" = 0 ] && [ "$failed" = 0 ] || {
    sort "$loop_dir/errors" | uniq -c | head -n 5
    fail "requests refused or failed across restart/upgrade"
}

# ---- watchdog -------------------------------------------------------------------------------
# The packaged WatchdogSec=30s; a drop-in shortens it for the test, with workers: 2, and a
# worker thread (slp-worker-1) is stopped alone with ptrace from this machine (the container's
# threads are this machine's too): the pings stop and systemd must restart slp within
# WatchdogSec plus a few seconds.
echo "packaged WatchdogUSec: $(in_ct systemctl show -P WatchdogUSec slp.service)"
mkdir -p "$root/etc/systemd/system/slp.service.d"
printf '[Service]\nWatchdogSec=5s\n' >"$root/etc/systemd/system/slp.service.d/watchdog-test.conf"
cp "$root/etc/slp/slp.yaml" "$work/good.yaml"
sed -i 's/^workers: .*//' "$root/etc/slp/slp.yaml"
printf 'workers: 2\n' >>"$root/etc/slp/slp.yaml"
in_ct systemctl daemon-reload
in_ct systemctl restart slp.service || fail "restart with workers: 2"
wedged_pid=$(main_pid)
host_pid=""
for p in $(pgrep -x slp); do # this machine's pid of the container's MainPID
    ns_pids=$(awk '/^NSpid:/ {print $NF}' "/proc/$p/status" 2>/dev/null)
    [ "$ns_pids" = "$wedged_pid" ] && [ "$(readlink "/proc/$p/ns/pid")" = "$(readlink "/proc/$leader/ns/pid")" ] && host_pid=$p
done
worker_tid=""
for t in /proc/$host_pid/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = slp-worker-1 ] && worker_tid=${t##*/}
done
if [ -z "$host_pid" ] || [ -z "$worker_tid" ] || ! command -v python3 >/dev/null; then
    fail "watchdog: no slp-worker-1 thread found (pid ${host_pid:-?}) or no python3 here"
else
    # PTRACE_SEIZE + PTRACE_INTERRUPT stop that one thread (a SIGSTOP would stop them all);
    # the tracer holds it stopped and reaps it when systemd kills slp (a traced thread that
    # is not reaped by its tracer would keep the process from ending).
    python3 - "$worker_tid" >"$work/freezer.log" 2>&1 <<'PY' &
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
tid = int(sys.argv[1])
if libc.ptrace(0x4206, tid, 0, 0) != 0 or libc.ptrace(0x4207, tid, 0, 0) != 0:
    print("ptrace failed:", os.strerror(ctypes.get_errno())); sys.exit(1)
print("stopped thread", tid, flush=True)
signal.alarm(60)
while True:  # stays stopped; signals to it are not passed on
    _, status = os.waitpid(tid, 0x40000000)  # __WALL
    if os.WIFEXITED(status) or os.WIFSIGNALED(status):
        break
print("thread", tid, "ended with slp", flush=True)
PY
    freezer=$!
    wedged_at=$(date +%s)
    new_pid=""
    for _ in $(seq 1 60); do
        new_pid=$(main_pid)
        [ -n "$new_pid" ] && [ "$new_pid" != 0 ] && [ "$new_pid" != "$wedged_pid" ] &&
            [ "$(in_ct systemctl is-active slp.service)" = active ] && break
        new_pid=""
        sleep 0.5
    done
    kill "$freezer" 2>/dev/null
    wait "$freezer" 2>/dev/null
    cat "$work/freezer.log"
    took=$(($(date +%s) - wedged_at))
    if [ -n "$new_pid" ]; then
        echo "watchdog: slp-worker-1 wedged; slp restarted after $took s (WatchdogSec=5s): MainPID $wedged_pid -> $new_pid"
        [ "$took" -le 15 ] || fail "the watchdog restart took $took s (WatchdogSec=5s)"
    else
        fail "a wedged worker did not get slp restarted within 30 s"
    fi
    journal | grep -E "Watchdog timeout|watchdog: slp-worker-1" | sed 's/^/  /'
fi
rm -f "$root/etc/systemd/system/slp.service.d/watchdog-test.conf"
cp "$work/good.yaml" "$root/etc/slp/slp.yaml"
in_ct systemctl daemon-reload
in_ct systemctl restart slp.service || fail "restart after the watchdog test"

# ---- sandbox score --------------------------------------------------------------------------
# Type=notify, the socket, the watchdog and /run/slp must not cost exposure: the unit before
# them (Type=exec, no socket) rated 1.4 offline (`--offline=yes`, as check-package.sh and
# installer/README.md measure it); the same measure here, and the running unit's for reference.
baseline=1.4
score() { sed -n 's/.*Overall exposure level for slp.service: \([0-9.]*\).*/\1/p'; }
exposure=$(in_ct systemd-analyze security --no-pager --offline=yes /lib/systemd/system/slp.service 2>/dev/null | score)
running=$(in_ct systemd-analyze security --no-pager slp.service 2>/dev/null | score)
echo "systemd-analyze security slp: ${exposure:-?} offline, ${running:-?} running (the unit before socket activation and Type=notify: $baseline offline)"
awk -v a="${exposure:-99}" -v b="$baseline" 'BEGIN { exit !(a <= b) }' ||
    fail "systemd-analyze security: exposure ${exposure:-unknown} is worse than $baseline"

# ---- stop -----------------------------------------------------------------------------------
if in_ct systemctl stop slp.service; then echo "systemctl stop slp: ok"; else fail "systemctl stop slp: exit $?"; fi
active=$(in_ct systemctl is-active slp.service)
result=$(in_ct systemctl show -P Result slp.service)
code=$(in_ct systemctl show -P ExecMainStatus slp.service)
echo "after stop: $active, Result=$result, ExecMainStatus=$code"
[ "$active" = inactive ] && [ "$result" = success ] && [ "$code" = 0 ] || fail "slp did not stop cleanly"

echo "-- journalctl -u slp (in the container) --"
journal | sed 's/^/  /'

in_ct systemctl poweroff >/dev/null 2>&1 || true
for _ in $(seq 1 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
echo "boot test: $(($(date +%s) - started)) s, $failures failure(s)"
[ "$failures" = 0 ]
