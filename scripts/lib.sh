# Shell helpers the scripts share (sourced, not run).

# Waits up to 60 s for "listening on HOST:PORT" (what slp and the mock upstream print) in a
# log file; prints the port. On timeout says so on stderr, shows the file and returns 1.
wait_listening() {
    local file="$1" i
    for i in $(seq 1 600); do
        if grep -q "listening on" "$file" 2>/dev/null; then
            grep -m1 -o "listening on [^ ]*" "$file" | sed 's/.*://'
            return 0
        fi
        sleep 0.1
    done
    echo "$(basename "$0"): no listening line in $file" >&2
    cat "$file" >&2
    return 1
}
