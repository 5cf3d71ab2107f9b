#!/usr/bin/env bash
# Installs everything SLP needs to build and test on Debian 12, from Debian's packages (and the
# openai npm package for the client test). Safe to run again: installed packages are skipped.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(
    build-essential cmake ninja-build pkg-config
    qt6-base-dev qt6-httpserver-dev qt6-websockets-dev
    libyaml-cpp-dev libhttp-parser-dev libsystemd-dev
    curl ca-certificates python3 clang-format caddy lintian desktop-file-utils
    xvfb xauth x11-utils dbus tint2 dunst xdotool imagemagick
    debootstrap systemd-container prometheus
    keepalived # tests/ha/failover.sh: two machines in network namespaces
    gnuplot-nox # bench/run.sh plots its size sweeps
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js for the openai client test: Debian's nodejs/npm unless a node is already installed.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

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

here="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -d "$here/tests/node/node_modules/openai" ] || [ ! -d "$here/tests/node/node_modules/ws" ]; then
    echo "install-deps: npm install (tests/node)"
    (cd "$here/tests/node" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
