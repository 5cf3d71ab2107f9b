#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what it needs, builds with
# warnings as errors, runs every test through ctest (GUI tests run offscreen).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_BUILD_DIR:-$here/build}"

"$here/scripts/install-deps.sh" test

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLP_WERROR=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)"

export QT_QPA_PLATFORM=offscreen
cd "$build"
ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
