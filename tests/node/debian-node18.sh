#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Debian 12's own Node.js (18.20), for the client tests' `.node18` twins on a machine whose
# `node` is another one (CI's is 20). Debian builds its Node with three of its built-in modules
# taken from /usr/share/nodejs at run time (undici, acorn, cjs-module-lexer), so its binary
# cannot simply be unpacked beside another Node: it runs here in a private mount namespace
# whose /usr/share/nodejs is an overlay of Debian's copy on the machine's own. Nothing outside
# that namespace changes.
#
#   debian-node18.sh --fetch   downloads Debian's packages (apt-get download, as root) and
#                              unpacks them into $SLP_NODE18_DIR (/var/cache/slp-test-node18)
#   debian-node18.sh ARGS...   runs Debian's Node 18 with ARGS; exits 77 with the reason on
#                              stderr where it is not to be had
#
# Where `node` itself is a Node 18 (a fresh Debian 12), that one is run.
set -euo pipefail
dir="${SLP_NODE18_DIR:-/var/cache/slp-test-node18}"
unavailable() { echo "debian-node18: $*" >&2; exit 77; }

# Debian's version of a package: the highest one apt knows from a Debian archive (never
# NodeSource's, which may be installed and newer).
debian_version() {
    apt-cache madison "$1" 2>/dev/null | awk -F'|' '$3 ~ /debian/ { gsub(/ /, "", $2); print $2; exit }'
}

fetch() {
    [ "$(id -u)" -eq 0 ] || unavailable "--fetch needs root (apt-get download)"
    if [ -x "$dir/root/usr/bin/node" ]; then
        echo "debian-node18: $dir has $("$0" --version 2>/dev/null || echo 'a Node 18')"
        return 0
    fi
    local version
    version=$(debian_version nodejs)
    [[ "$version" == 18.* ]] || unavailable "apt knows no Debian nodejs 18 (found '${version:-none}')"
    local work="$dir.partial"
    rm -rf "$work"
    mkdir -p "$work/debs"
    # apt's sandbox user must be able to write where it downloads.
    chown _apt "$work/debs" 2>/dev/null || true
    (cd "$work/debs" && apt-get download -q "nodejs=$version" "libnode108=$version" \
        node-undici node-acorn node-cjs-module-lexer >/dev/null)
    for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
    rm -rf "$work/debs" "$dir"
    mv "$work" "$dir"
    echo "debian-node18: Debian's Node $version in $dir"
}

run() {
    if command -v node >/dev/null 2>&1 && [[ "$(node --version 2>/dev/null)" == v18.* ]]; then
        exec node "$@"
    fi
    [ -x "$dir/root/usr/bin/node" ] ||
        unavailable "no Debian Node 18 in $dir (scripts/install-deps.sh test fetches it as root)"
    [ "$(id -u)" -eq 0 ] || unavailable "running Debian's Node 18 beside another Node needs root"
    [ -d /usr/share/nodejs ] || unavailable "/usr/share/nodejs is missing: nothing to overlay"
    command -v unshare >/dev/null 2>&1 || unavailable "unshare (util-linux) is missing"
    # The overlay's lower layers: Debian's modules first, the machine's own after them.
    exec unshare --mount --propagation private -- /bin/sh -c '
        mount -t overlay slp-node18 -o "lowerdir=$0/usr/share/nodejs:/usr/share/nodejs" \
            /usr/share/nodejs || exit 77
        LD_LIBRARY_PATH="$0/usr/lib/x86_64-linux-gnu" exec "$0/usr/bin/node" "$@"
    ' "$dir/root" "$@"
}

if [ "${1:-}" = "--fetch" ]; then fetch; else run "$@"; fi
