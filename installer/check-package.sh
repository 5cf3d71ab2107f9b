#!/usr/bin/env bash
# ctest package.deb: builds the .debs with cpack and checks them.
#   check-package.sh BUILD_DIR INSTALLER_SOURCE_DIR DEB_VERSION "daemon;monitor"
# 1. cpack -G DEB into a temporary directory
# 2. dpkg-deb: every file where it belongs, conffiles, Depends from dpkg-shlibdeps (the daemon
#    must not pull Qt Widgets)
# 3. the packaged slp runs `slp --check` on the packaged /etc/slp/slp.yaml
# 4. lintian: every tag printed; an error or a warning fails the test
# 5. systemd-analyze verify on the unit (and the offline security score, for information)
# 6. the install test, where it is allowed (see installer/README.md, "The install test"):
#    - SLP_TEST_CHROOT=DIR (a Debian 12 root made by installer/make-test-chroot.sh; the
#      default /var/cache/slp-test-chroot/bookworm is used when it exists): a copy of it gets
#      the .debs with apt (their Depends resolved on a clean root), then slp --check, remove,
#      purge;
#    - also, with SLP_PACKAGE_INSTALL_TEST=1 or CI=true (as .ci/run runs): dpkg -i on this
#      machine, slp --check, a conffile edit survives a reinstall, dpkg -r keeps the conffile,
#      dpkg --purge removes it; refused when slp is installed already (not ours to remove);
#    - neither: the install test is skipped, and says so.
# 7. with the same root and systemd-nspawn: installer/boot-test.sh boots it with the .deb
#    installed and checks slp.service (start, /healthz, reload good and bad, stop); it skips,
#    saying why, where this machine cannot boot a container.
set -uo pipefail

build_dir=$1
src_dir=$2
version=$3
components=${4:-daemon;monitor}
arch=$(dpkg --print-architecture)
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
step() { echo; echo "== $* =="; }

work=$(mktemp -d /tmp/slp-package-test.XXXXXX)
installed_here=0
cleanup() {
    if [ "$installed_here" = 1 ]; then
        dpkg_locked --purge slp-monitor slp >/dev/null 2>&1 || true
    fi
    if [ -n "${chroot_work:-}" ] && [ -d "$chroot_work" ]; then
        umount "$chroot_root/proc" 2>/dev/null || true
        if [ "${overlay:-0}" = 1 ]; then umount "$chroot_root" || true; fi
        rm -rf --one-file-system "$chroot_work"
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# dpkg, waiting (up to a minute) while another apt or dpkg holds the lock.
dpkg_locked() {
    local out rc i
    for i in $(seq 1 30); do
        out=$(dpkg "$@" 2>&1)
        rc=$?
        if [ "$rc" != 0 ] && grep -q "lock" <<<"$out"; then
            sleep 2
            continue
        fi
        echo "$out"
        return "$rc"
    done
    echo "$out"
    return "$rc"
}

started=$(date +%s)
step "cpack"
if ! (cd "$build_dir" && cpack -G DEB -B "$work/out" --config CPackConfig.cmake) >"$work/cpack.log" 2>&1; then
    cat "$work/cpack.log"
    echo "FAIL: cpack"
    exit 1
fi
grep -E "package: .*\.deb generated" "$work/cpack.log"
deb_slp="$work/out/slp_${version}_${arch}.deb"
deb_mon="$work/out/slp-monitor_${version}_${arch}.deb"
[ -f "$deb_slp" ] || { ls -l "$work/out"; echo "FAIL: no $deb_slp"; exit 1; }
debs=("$deb_slp")
with_monitor=0
if [[ ";$components;" == *";monitor;"* ]]; then
    with_monitor=1
    [ -f "$deb_mon" ] || { ls -l "$work/out"; echo "FAIL: no $deb_mon"; exit 1; }
    debs+=("$deb_mon")
fi
echo "cpack: $(($(date +%s) - started)) s"

# ---- contents ----------------------------------------------------------------------------
expect_files() { # deb, then paths
    local deb=$1
    shift
    local listing
    listing=$(dpkg-deb --contents "$deb" | awk '{print $1, $6}')
    for path in "$@"; do
        grep -qE "^-[rwx-]+ \./${path#/}$" <<<"$listing" || fail "$(basename "$deb") lacks $path"
    done
}
expect_mode() { # deb, path, mode string
    dpkg-deb --contents "$1" | awk -v p="./${2#/}" -v m="$3" '$6 == p { found = 1; if ($1 != m) { print "mode of " p ": " $1 ", want " m; exit 1 } } END { if (!found) exit 1 }' ||
        fail "$(basename "$1"): $2 is not $3"
}

step "dpkg-deb slp"
dpkg-deb --info "$deb_slp"
dpkg-deb --contents "$deb_slp"
expect_files "$deb_slp" /usr/bin/slp /etc/slp/slp.yaml /lib/systemd/system/slp.service \
    /lib/systemd/system/slp.socket \
    /usr/share/man/man1/slp.1.gz /usr/share/doc/slp/copyright \
    /usr/share/doc/slp/changelog.Debian.gz /usr/share/doc/slp/README.md \
    /usr/share/doc/slp/docs/CONFIG.md /usr/share/doc/slp/docs/OPERATE.md \
    /usr/share/doc/slp/docs/METRICS.md /usr/share/doc/slp/docs/HTTP.md \
    /usr/share/doc/slp/examples/slp.yaml /usr/share/doc/slp/examples/Caddyfile \
    /usr/share/doc/slp/prometheus/slp.rules.yml /usr/share/doc/slp/prometheus/slp.rules.test.yml \
    /usr/share/slp/ha/keepalived.conf /usr/share/slp/ha/slp-ha.conf /usr/share/slp/ha/slp-ha-check \
    /usr/share/slp/ha/slp-ha-drain /usr/share/slp/ha/slp-ha-notify
expect_mode "$deb_slp" /usr/bin/slp -rwxr-xr-x
expect_mode "$deb_slp" /etc/slp/slp.yaml -rw-r--r--
expect_mode "$deb_slp" /lib/systemd/system/slp.service -rw-r--r--
expect_mode "$deb_slp" /lib/systemd/system/slp.socket -rw-r--r--
dpkg-deb --contents "$deb_slp" | grep -q "slp-monitor" && fail "slp ships slp-monitor files"
[ "$(dpkg-deb --ctrl-tarfile "$deb_slp" | tar -xOf - ./conffiles)" = "/etc/slp/slp.yaml" ] ||
    fail "slp: conffiles is not exactly /etc/slp/slp.yaml"
depends=$(dpkg-deb --field "$deb_slp" Depends)
grep -q "libqt6core6" <<<"$depends" || fail "slp: Depends lacks libqt6core6 (dpkg-shlibdeps): $depends"
grep -q "libqt6httpserver6" <<<"$depends" || fail "slp: Depends lacks libqt6httpserver6: $depends"
grep -q "libyaml-cpp" <<<"$depends" || fail "slp: Depends lacks libyaml-cpp: $depends"
grep -qE "libqt6widgets6|libqt6gui6|libqt6dbus6" <<<"$depends" && fail "slp pulls Qt Widgets/Gui/DBus: $depends"

if [ "$with_monitor" = 1 ]; then
    step "dpkg-deb slp-monitor"
    dpkg-deb --info "$deb_mon"
    dpkg-deb --contents "$deb_mon"
    expect_files "$deb_mon" /usr/bin/slp-monitor /usr/share/applications/slp-monitor.desktop \
        /etc/xdg/autostart/slp-monitor.desktop /usr/share/man/man1/slp-monitor.1.gz \
        /usr/share/icons/hicolor/scalable/apps/slp-monitor.svg \
        /usr/share/icons/hicolor/scalable/apps/slp-monitor-ok.svg \
        /usr/share/icons/hicolor/scalable/apps/slp-monitor-attention.svg \
        /usr/share/icons/hicolor/scalable/apps/slp-monitor-alert.svg \
        /usr/share/doc/slp-monitor/copyright /usr/share/doc/slp-monitor/changelog.Debian.gz
    dpkg-deb --contents "$deb_mon" | grep -qE "\./usr/bin/slp$" && fail "slp-monitor ships /usr/bin/slp"
    [ "$(dpkg-deb --ctrl-tarfile "$deb_mon" | tar -xOf - ./conffiles)" = "/etc/xdg/autostart/slp-monitor.desktop" ] ||
        fail "slp-monitor: conffiles is not exactly the autostart entry"
    grep -q "libqt6widgets6" <<<"$(dpkg-deb --field "$deb_mon" Depends)" ||
        fail "slp-monitor: Depends lacks libqt6widgets6"
fi

# ---- the packaged binary on the packaged config -------------------------------------------
step "slp --check on the packaged config"
mkdir -p "$work/root"
for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$work/root"; done
# One version: the .deb's Version is the CMake project version plus the Debian revision, and
# both packaged programs print the project version.
project_version=${version%-*}
for deb in "${debs[@]}"; do
    deb_version=$(dpkg-deb -f "$deb" Version)
    echo "dpkg-deb -f $(basename "$deb") Version: $deb_version"
    [ "$deb_version" = "$version" ] || fail "$(basename "$deb"): Version $deb_version, want $version"
done
out=$("$work/root/usr/bin/slp" --version) || fail "packaged slp --version"
echo "$out"
[ "$out" = "slp $project_version" ] || fail "packaged slp --version says '$out', want 'slp $project_version'"
zcat "$work/root/usr/share/man/man1/slp.1.gz" | grep -q "^\.TH SLP 1 .* \"slp $project_version\"" ||
    fail "slp.1 does not carry version $project_version"
"$work/root/usr/bin/slp" --check --config "$work/root/etc/slp/slp.yaml" ||
    fail "packaged slp --check on the packaged /etc/slp/slp.yaml"
if [ "$with_monitor" = 1 ]; then
    out=$(QT_QPA_PLATFORM=offscreen "$work/root/usr/bin/slp-monitor" --version) || fail "packaged slp-monitor --version"
    echo "$out"
    [ "$out" = "slp-monitor $project_version" ] ||
        fail "packaged slp-monitor --version says '$out', want 'slp-monitor $project_version'"
    zcat "$work/root/usr/share/man/man1/slp-monitor.1.gz" | grep -q "\"slp-monitor $project_version\"" ||
        fail "slp-monitor.1 does not carry version $project_version"
fi
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$work/root/usr/share/applications/slp-monitor.desktop" || fail "desktop-file-validate"
fi

# ---- lintian -----------------------------------------------------------------------------
step "lintian"
if command -v lintian >/dev/null; then
    # As root lintian says it should not be; it checks the same.
    lintian --fail-on error,warning --display-info --tag-display-limit 0 "${debs[@]}" 2>&1 |
        grep -v "running with root privileges is not recommended"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] && echo "lintian: no errors or warnings" ||
        fail "lintian reported errors or warnings (exit $rc)"
else
    fail "lintian is not installed (scripts/install-deps.sh installs it)"
fi

# ---- systemd-analyze ---------------------------------------------------------------------
step "systemd-analyze verify"
if command -v systemd-analyze >/dev/null; then
    # The packaged unit, with ExecStart pointing at the unpacked binary (verify checks that it
    # is executable); Documentation=man:slp(1) is checked above as a file in the package and
    # by the install test below, so man lookups are off here.
    mkdir -p "$work/unit"
    sed "s|/usr/bin/slp |$work/root/usr/bin/slp |" "$work/root/lib/systemd/system/slp.service" >"$work/unit/slp.service"
    cp "$work/root/lib/systemd/system/slp.socket" "$work/unit/slp.socket" # slp.service Requires it
    grep -q "^ExecStart=$work/root/usr/bin/slp --config /etc/slp/slp.yaml$" "$work/unit/slp.service" ||
        fail "slp.service: ExecStart is not /usr/bin/slp --config /etc/slp/slp.yaml"
    out=$(systemd-analyze verify --man=no "$work/unit/slp.service" "$work/unit/slp.socket" 2>&1)
    rc=$?
    echo "${out:-(no findings)}"
    [ "$rc" = 0 ] && [ -z "$out" ] || fail "systemd-analyze verify slp.service slp.socket (exit $rc)"
    echo "-- systemd-analyze security --offline=yes (information: lower is better) --"
    systemd-analyze security --offline=yes "$work/unit/slp.service" 2>&1 | tail -n 1
else
    fail "systemd-analyze is not installed"
fi

# ---- install ------------------------------------------------------------------------------
chroot_dir=${SLP_TEST_CHROOT:-/var/cache/slp-test-chroot/bookworm}
if [ -x "$chroot_dir/bin/sh" ]; then
    step "install on a clean Debian 12 root (a copy of $chroot_dir)"
    t0=$(date +%s)
    chroot_work=$(mktemp -d /var/tmp/slp-chroot.XXXXXX)
    chroot_root=$chroot_work/root
    mkdir -p "$chroot_root" "$chroot_work/upper" "$chroot_work/work"
    # An overlay keeps the cached root pristine and costs nothing to set up or throw away;
    # where overlayfs is not allowed, a copy.
    if mount -t overlay overlay -o "lowerdir=$chroot_dir,upperdir=$chroot_work/upper,workdir=$chroot_work/work" "$chroot_root" 2>/dev/null; then
        overlay=1
        echo "(an overlay on $chroot_dir)"
    else
        overlay=0
        cp -a "$chroot_dir/." "$chroot_root/"
    fi
    cp "${debs[@]}" "$chroot_root/tmp/"
    mount -t proc proc "$chroot_root/proc" 2>/dev/null || true
    cp /etc/resolv.conf "$chroot_root/etc/resolv.conf" 2>/dev/null || true
    in_chroot() { chroot "$chroot_root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
    names=()
    for deb in "${debs[@]}"; do names+=("/tmp/$(basename "$deb")"); done
    if in_chroot apt-get install -y -q --no-install-recommends "${names[@]}" >"$work/chroot-apt.log" 2>&1; then
        tail -n 5 "$work/chroot-apt.log"
        in_chroot /usr/bin/slp --check --config /etc/slp/slp.yaml || fail "chroot: slp --check"
        [ "$with_monitor" = 1 ] && { in_chroot env QT_QPA_PLATFORM=offscreen /usr/bin/slp-monitor --version || fail "chroot: slp-monitor --version"; }
        in_chroot dpkg -r slp || fail "chroot: dpkg -r slp"
        [ -f "$chroot_root/etc/slp/slp.yaml" ] || fail "chroot: dpkg -r removed the conffile"
        in_chroot dpkg --purge slp || fail "chroot: dpkg --purge slp"
        [ -e "$chroot_root/etc/slp" ] && fail "chroot: /etc/slp left after purge"
    else
        tail -n 30 "$work/chroot-apt.log"
        fail "chroot: apt-get install of the .debs"
    fi
    echo "chroot install test: $(($(date +%s) - t0)) s"
fi
# The machine install checks what the chroot does not (a conffile edit survives a reinstall,
# systemd-analyze on the installed unit), so it runs whenever it is asked for.
if [ "${SLP_PACKAGE_INSTALL_TEST:-0}" != 0 ] || [ "${CI:-}" = true ]; then
    step "install on this machine (SLP_PACKAGE_INSTALL_TEST=${SLP_PACKAGE_INSTALL_TEST:-} CI=${CI:-})"
    if dpkg-query -W -f='${Status}' slp 2>/dev/null | grep -q "ok installed" ||
        dpkg-query -W -f='${Status}' slp-monitor 2>/dev/null | grep -q "ok installed"; then
        fail "slp or slp-monitor is installed on this machine already; not touching it"
    elif [ "$(id -u)" != 0 ]; then
        fail "the install test needs root (dpkg -i)"
    else
        installed_here=1
        dpkg_locked -i "${debs[@]}" || fail "dpkg -i"
        dpkg-query -W -f='${Package} ${Version} ${Status}\n' slp
        /usr/bin/slp --check --config /etc/slp/slp.yaml || fail "slp --check --config /etc/slp/slp.yaml"
        out=$(systemd-analyze verify /lib/systemd/system/slp.service /lib/systemd/system/slp.socket 2>&1)
        echo "systemd-analyze verify (installed): ${out:-no findings}"
        [ -z "$out" ] || fail "systemd-analyze verify on the installed unit"
        # A local edit of the conffile survives reinstalling the package.
        echo "# local edit" >>/etc/slp/slp.yaml
        dpkg_locked -i "$deb_slp" >/dev/null || fail "dpkg -i again"
        grep -q "^# local edit" /etc/slp/slp.yaml || fail "reinstall lost the conffile edit"
        if [ "$with_monitor" = 1 ]; then dpkg_locked -r slp-monitor || fail "dpkg -r slp-monitor"; fi
        dpkg_locked -r slp || fail "dpkg -r slp"
        [ -e /usr/bin/slp ] && fail "dpkg -r left /usr/bin/slp"
        [ -f /etc/slp/slp.yaml ] || fail "dpkg -r removed the conffile (it must stay until purge)"
        dpkg_locked --purge slp slp-monitor || fail "dpkg --purge"
        [ -e /etc/slp ] && fail "/etc/slp left after purge"
        installed_here=0
        echo "install test on this machine: done"
    fi
elif [ ! -x "$chroot_dir/bin/sh" ]; then
    step "install test skipped"
    echo "No Debian 12 root at $chroot_dir (installer/make-test-chroot.sh makes one) and"
    echo "neither SLP_PACKAGE_INSTALL_TEST=1 nor CI=true is set (either: dpkg -i on this machine)."
fi

# ---- boot -------------------------------------------------------------------------------------
# The unit itself, under systemd as PID 1 on a clean root: start, /healthz, reload with a good
# and a bad config, stop. Needs the same root as the chroot install test and systemd-nspawn.
if [ "${SLP_SANITIZED:-0}" = 1 ]; then
    # scripts/test-asan.sh packs the sanitizer build: LeakSanitizer stops every thread with
    # ptrace at each exit, which the unit's syscall sandbox refuses, so each exit (the reload's
    # check, the stop) fails on the sandbox, not on slp. The release suite boots the real .deb.
    step "boot test skipped: a sanitizer build under the unit's sandbox (the release suite boots it)"
elif [ -x "$chroot_dir/bin/sh" ]; then
    step "boot a clean Debian 12 root with systemd-nspawn (installer/boot-test.sh)"
    "$src_dir/boot-test.sh" "$chroot_dir" "$deb_slp"
    rc=$?
    case $rc in
    0) ;;
    77) echo "(boot test skipped, above says why)" ;;
    *) fail "boot test (exit $rc)" ;;
    esac
else
    step "boot test skipped"
    echo "No Debian 12 root at $chroot_dir (installer/make-test-chroot.sh makes one): the"
    echo "systemd-nspawn boot test of slp.service needs it."
fi

echo
echo "package test: $(($(date +%s) - started)) s, $failures failure(s)"
[ "$failures" = 0 ]
