#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Makes the clean Debian 12 root that the package test (installer/check-package.sh) installs
# the .debs into: debootstrap --variant=minbase bookworm, apt lists updated, and the runtime
# libraries the packages depend on downloaded (not installed) so each test run installs from
# the local cache; so are systemd and systemd-sysv, which the boot test (systemd-nspawn
# --boot) installs into its own copy of the root. About 3-4 minutes on a 2-core machine, once
# per machine.
#   installer/make-test-chroot.sh [DIR]     (default /var/cache/slp-test-chroot/bookworm)
# Needs root and debootstrap. The Debian archive is the one this machine's apt already uses
# for bookworm (its sources, as `apt-get indextargets` reads them); SLP_DEBIAN_MIRROR=URI
# overrides it.
set -euo pipefail

dir=${1:-/var/cache/slp-test-chroot/bookworm}

# The URI this machine's apt fetches bookworm's main component from: apt itself parses
# /etc/apt/sources.list, sources.list.d/*.list and *.sources (one-line and deb822 forms). An
# entry whose Release file says Origin: Debian wins; before the first apt-get update there is
# no Release file, so any bookworm/main entry does.
apt_mirror() {
    local uri
    uri=$(apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 'Release: bookworm' \
        'Component: main' 'Origin: Debian' 2>/dev/null | head -n 1)
    [ -n "$uri" ] || uri=$(apt-get indextargets --no-release-info --format '$(REPO_URI)' \
        'Identifier: Packages' 'Release: bookworm' 'Component: main' 2>/dev/null | head -n 1)
    echo "${uri%/}"
}
mirror=${SLP_DEBIAN_MIRROR:-$(apt_mirror)}
if [ -x "$dir/bin/sh" ]; then
    echo "make-test-chroot: $dir exists; remove it to make it again"
    exit 0
fi
command -v debootstrap >/dev/null || {
    echo "make-test-chroot: apt-get install debootstrap" >&2
    exit 1
}
if [ -z "$mirror" ]; then
    echo "make-test-chroot: this machine's apt has no source for bookworm main" >&2
    echo "  (see /etc/apt/sources.list*; or set SLP_DEBIAN_MIRROR=URI)" >&2
    exit 1
fi
echo "make-test-chroot: debootstrap bookworm from $mirror (this machine's apt source)"

started=$(date +%s)
tmp="$dir.partial"
rm -rf --one-file-system "$tmp"
mkdir -p "$(dirname "$dir")"
debootstrap --variant=minbase bookworm "$tmp" "$mirror" >"$tmp.log" 2>&1 || {
    tail -n 20 "$tmp.log" >&2
    exit 1
}
cp /etc/resolv.conf "$tmp/etc/resolv.conf"
in_root() { chroot "$tmp" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -q >>"$tmp.log" 2>&1
# What dpkg-shlibdeps puts in the packages' Depends today; apt fetches anything new later.
in_root apt-get install -y -q --download-only --no-install-recommends \
    libqt6core6 libqt6network6 libqt6httpserver6 libqt6websockets6 libyaml-cpp0.7 libhttp-parser2.9 \
    libqt6widgets6 libqt6gui6 libqt6dbus6 >>"$tmp.log" 2>&1
# The boot test's init: systemd as PID 1 (never installed in the cached root itself, which
# stays minbase so the install test proves the packages' Depends). procps stays out on
# purpose: a minimal Debian 12 has no /bin/kill, and `systemctl reload slp` must not need it.
in_root apt-get install -y -q --download-only --no-install-recommends systemd systemd-sysv \
    >>"$tmp.log" 2>&1
mv "$tmp" "$dir"
rm -f "$tmp.log"
echo "make-test-chroot: $dir ready in $(($(date +%s) - started)) s"
