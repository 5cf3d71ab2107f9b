#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs what SLP needs on Debian 12, from Debian's packages (and, for the test set, the npm
# packages of tests/node), in three sets, each holding the one before it:
#   build   compiles slp and slp-monitor: a C++ toolchain, CMake, Ninja, Qt 6.4, yaml-cpp,
#           http-parser, libsystemd
#   demo    build, and what scripts/demo.sh runs: curl, and python3 (the test tree's
#           configure, which builds the mock backend, asks for it)
#   test    demo, and what the whole suite runs (the default): clang-format, Caddy, lintian,
#           Xvfb and a desktop for the tray test, Prometheus, keepalived, debootstrap and
#           systemd-nspawn for the package test, podman for the container test, Node.js with the
#           openai and ws packages, and Debian's own Node 18 beside another Node
#   scripts/install-deps.sh [build|demo|test]
# Safe to run again: what is installed is skipped. Prints how long it took and what it added.
set -euo pipefail

set_name=${1:-test}
case "$set_name" in
build | demo | test) ;;
*) echo "install-deps: unknown set '$set_name' (build, demo or test)" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/.." && pwd)"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(build-essential cmake ninja-build pkg-config
    qt6-base-dev qt6-httpserver-dev qt6-websockets-dev
    libyaml-cpp-dev libhttp-parser-dev libsystemd-dev)
if [ "$set_name" != build ]; then
    packages+=(curl ca-certificates python3)
fi
if [ "$set_name" = test ]; then
    packages+=(clang-format caddy lintian desktop-file-utils
        git                                                       # the format check lists files
        xvfb xauth x11-utils dbus tint2 dunst xdotool imagemagick # tests/monitor: a real tray
        debootstrap systemd-container                             # the package test's clean root
        prometheus                                                # promtool, for the alert rules
        keepalived                                                # tests/ha/failover.sh
        gnuplot-nox                                               # bench/run.sh plots its sweeps
        podman runc                                               # the container test
        # What Debian's Node 18 links, for tests/node/debian-node18.sh beside another Node.
        libc-ares2 libuv1 libbrotli1 libnghttp2-14 libicu72 libssl3)
fi

started=$(date +%s%N)
installed_kib() { dpkg-query -W -f='${db:Status-Abbrev} ${Installed-Size}\n' 2>/dev/null |
    awk '$1 == "ii" { s += $2 } END { print s + 0 }'; }
dir_kib() { [ -d "$1" ] && du -sk "$1" | cut -f1 || echo 0; }
before_kib=$(installed_kib)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js for the client tests: Debian's nodejs/npm unless a node is already installed.
if [ "$set_name" = test ]; then
    if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
    if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
fi

if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # systemd-container (systemd-nspawn, for the package test's boot test) and libsystemd-dev
    # must be the installed systemd's exact version: the newer point release in bookworm's
    # main pulls a libsystemd0 that the installed systemd refuses, and apt then gives up
    # ("Resolve generated breaks"). Asking for the installed version keeps systemd as it is.
    systemd_version=$(dpkg-query -W -f='${Version}' systemd 2>/dev/null || true)
    for pinned in systemd-container libsystemd-dev; do
        candidates=$(apt-cache madison "$pinned" 2>/dev/null || true)
        if [ -n "$systemd_version" ] && grep -qF " $systemd_version " <<<"$candidates"; then
            missing=("${missing[@]/#$pinned/$pinned=$systemd_version}")
        fi
    done
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
added="+$(( ($(installed_kib) - before_kib) / 1024 )) MiB in Debian packages"

if [ "$set_name" = test ]; then
    node_modules="$here/tests/node/node_modules"
    if [ ! -d "$node_modules/openai" ] || [ ! -d "$node_modules/ws" ]; then
        echo "install-deps: npm install (tests/node)"
        before=$(dir_kib "$node_modules")
        (cd "$here/tests/node" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
        added+=", +$(( ($(dir_kib "$node_modules") - before) / 1024 )) MiB in tests/node"
    fi
    # The client tests' .node18 twins: Debian's Node 18 where `node` is another one.
    if [[ "$(node --version)" != v18.* ]] && [ "$(id -u)" -eq 0 ]; then
        node18="${SLP_NODE18_DIR:-/var/cache/slp-test-node18}"
        before=$(dir_kib "$node18")
        "$here/tests/node/debian-node18.sh" --fetch ||
            echo "install-deps: no Debian Node 18 to be had: the .node18 twins skip, saying why"
        added+=", +$(( ($(dir_kib "$node18") - before) / 1024 )) MiB for Debian's Node 18"
    fi
fi
echo "install-deps: the $set_name set is in place ($added) after $(( ($(date +%s%N) - started) / 1000000 )) ms"
