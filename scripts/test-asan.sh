#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer
# included): a separate build directory configured with -DSLP_SANITIZE=ON, then every ctest
# test, slp and the mock upstream instrumented as well. Any report fails the test that saw it.
#
#   scripts/test-asan.sh [ctest args...]      e.g. scripts/test-asan.sh -R integration
#
# SLP_ASAN_BUILD_DIR picks the build directory (default: build-asan beside the sources).
# Leaks inside Qt's own one-time allocations are suppressed by scripts/lsan.supp (see there).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_ASAN_BUILD_DIR:-$here/build-asan}"

"$here/scripts/install-deps.sh" test

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
start=$(date +%s)
cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLP_SANITIZE=ON -DSLP_WERROR=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)"
built=$(date +%s)
echo "test-asan: build took $((built - start)) s"

# halt_on_error for UBSan (the build also passes -fno-sanitize-recover=undefined); ASan stops
# at its first report anyway. detect_leaks runs LeakSanitizer at every instrumented exit.
# intercept_strndup=0: Debian 12's libxkbcommon-x11 strndup()s past a buffer's end while Qt's
# xcb plugin starts (the monitor's end-to-end test); that is the system library's bug, not SLP's.
export ASAN_OPTIONS="detect_leaks=1:intercept_strndup=0:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export QT_QPA_PLATFORM=offscreen
# Tests skip their RSS bounds under ASan (see tests/support/testsupport.h).
export SLP_SANITIZED=1
cd "$build"
status=0
ctest --output-on-failure --timeout 600 -j "$(nproc)" "$@" || status=$?
echo "test-asan: tests took $(($(date +%s) - built)) s (exit $status)"
exit "$status"
