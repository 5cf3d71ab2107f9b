#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined) and runs each one
# for SECONDS against its seed corpus in fuzz/corpus/<target>/.
#
#   fuzz/run.sh            the long run: 300 s per target (9 targets, about 45 minutes)
#   fuzz/run.sh 15         the short bounded run CI does
#   fuzz/run.sh 60 fuzz_request_head fuzz_body_scanner      only these targets
#
# Environment: SLP_FUZZ_BUILD_DIR (default build-fuzz beside the sources). New inputs found are kept in
# $SLP_FUZZ_BUILD_DIR/corpus/<target>/ (the seeds in the repo are never written); a crash
# leaves crash-*/leak-*/timeout-* files in $SLP_FUZZ_BUILD_DIR/artifacts/<target>/ and the
# script exits 1 after running every target. Reproduce one with
#   $SLP_FUZZ_BUILD_DIR/fuzz/<target> <artifact file>
# and add the input to fuzz/corpus/<target>/ once fixed, so it stays a regression seed.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${SLP_FUZZ_BUILD_DIR:-$here/build-fuzz}"
seconds="${1:-300}"
shift || true
all_targets=(fuzz_body_scanner fuzz_multipart fuzz_upgrade_target fuzz_request_head fuzz_request_split fuzz_config fuzz_sse_aggregator fuzz_prom_text
    fuzz_durations)
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("${all_targets[@]}")

if ! command -v clang++ >/dev/null 2>&1 ||
    ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    echo "fuzz: installing clang and its runtime libraries (libFuzzer, sanitizers)"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-dev >/dev/null
fi

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLP_BUILD_FUZZ=ON -DSLP_BUILD_TESTS=OFF \
    -DSLP_BUILD_MONITOR=OFF -DSLP_WERROR=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
failed=()
for t in "${targets[@]}"; do
    corpus="$build/corpus/$t"
    artifacts="$build/artifacts/$t"
    mkdir -p "$corpus" "$artifacts"
    log="$build/$t.log"
    echo "fuzz: $t for ${seconds}s"
    status=0
    # -rss_limit_mb and -timeout make memory blow-ups and hangs findings, not stuck runs.
    # timeout(1) bounds the whole target: a hang inside a library must fail the run, never
    # stall it (libFuzzer's own -timeout can wedge when the stuck thread holds a lock).
    timeout --kill-after=10 "$((seconds + 60))" \
    "$build/fuzz/$t" "$corpus" "$here/fuzz/corpus/$t" -max_total_time="$seconds" \
        -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    rate=$((runs / (seconds > 0 ? seconds : 1)))
    if [ "$status" -ne 0 ]; then
        echo "fuzz: $t FAILED (exit $status) after $runs runs; see $log and $artifacts/"
        grep -m 20 -E 'ERROR|fuzz_[a-z_]+:|SUMMARY|runtime error' "$log" || true
        failed+=("$t")
    else
        echo "fuzz: $t ok: $runs runs (~$rate/s), coverage ${cov:-?} edges, corpus $(ls "$corpus" | wc -l) files"
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: failures in ${failed[*]}"
    exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"
