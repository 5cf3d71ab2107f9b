#!/usr/bin/env python3
"""The failover test's client: loops chat requests through the virtual address, plain and
streaming in turn, each on a new connection, until STOP_FILE exists (at most LIMIT seconds).
One JSON line per request: start, end, kind, result (ok | failed), served (the machine whose
mock upstream answered, from X-Request-Id) and refused (connect attempts refused or timed out
before anything was sent: those are retried, as a client library retries a request that never
left). A request is failed only when it was sent and did not get its whole answer.

    client.py HOST PORT OUT_FILE STOP_FILE LIMIT_SECONDS
"""
import json
import os
import socket
import sys
import time

host, port, out_path, stop_path, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])


def request(stream):
    body = json.dumps({"model": "m", "stream": stream,
                       "messages": [{"role": "user", "content": "hello"}]}).encode()
    head = ("POST /v1/chat/completions HTTP/1.1\r\nHost: slp\r\nConnection: close\r\n"
            "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body))
    if stream:  # about 0.4 s of generation: often in flight when something happens
        head += "X-Mock-Events: 10\r\nX-Mock-Event-Interval-Ms: 40\r\n"
    return (head + "\r\n").encode() + body


def one(stream):
    start = time.time()
    refused = 0
    while True:  # connect; nothing is sent until it succeeds
        if time.time() - start > 10:
            return {"start": start, "end": time.time(), "kind": "stream" if stream else "plain",
                    "result": "failed", "served": "?", "refused": refused, "why": "no connection"}
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.connect((host, port))
            break
        except OSError:
            s.close()
            refused += 1
            time.sleep(0.02)
    s.settimeout(5)
    got = b""
    why = ""
    try:
        s.sendall(request(stream))
        while True:
            piece = s.recv(65536)
            if not piece:
                break
            got += piece
    except OSError as e:
        why = type(e).__name__
    s.close()
    head, _, rest = got.partition(b"\r\n\r\n")
    ok = head.startswith(b"HTTP/1.1 200 ") and (not stream or b"data: [DONE]" in rest)
    served = "?"
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"x-request-id:"):
            served = line.split(b":", 1)[1].strip()[:1].decode(errors="replace")
    return {"start": start, "end": time.time(), "kind": "stream" if stream else "plain",
            "result": "ok" if ok else "failed", "served": served, "refused": refused,
            "why": why or ("" if ok else head[:60].decode(errors="replace"))}


deadline = time.time() + limit
stream = False
with open(out_path, "a") as out:
    while not os.path.exists(stop_path) and time.time() < deadline:
        out.write(json.dumps(one(stream)) + "\n")
        out.flush()
        stream = not stream
