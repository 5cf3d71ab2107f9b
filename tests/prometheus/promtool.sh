#!/bin/sh
# promtool.sh DIR ARGS...: runs `promtool ARGS...` in DIR (resources/prometheus).
# promtool comes with Debian's prometheus package, which scripts/install-deps.sh installs.
# Without it the test fails when $CI is set (CI must never pass the rules untested) and is
# skipped, saying so loudly, on a developer's machine.
if ! command -v promtool >/dev/null 2>&1; then
    echo "promtool.sh: promtool not found: apt-get install prometheus (scripts/install-deps.sh)" >&2
    if [ -n "${CI:-}" ]; then
        echo "promtool.sh: CI is set: failing instead of skipping" >&2
        exit 1
    fi
    echo "promtool.sh: SKIPPED: the Prometheus rules are NOT tested on this machine" >&2
    exit 77
fi
cd "$1" || exit 1
shift
exec promtool "$@"
