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

# A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits up to 30 s until something accepts on 127.0.0.1:PORT; on timeout says so and returns 1.
wait_port() {
    local i
    for i in $(seq 1 300); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "$(basename "$0"): nothing listens on $1" >&2
    return 1
}
