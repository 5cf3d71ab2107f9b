#!/usr/bin/env python3
"""Mixed-traffic soak client for slp (driven by scripts/soak.sh; Python 3 stdlib only).

Workers send, in a weighted mix: plain chat requests, SSE streams, large bodies (1-4 MB),
aggregate-mode requests, clients that abort after the head and before it, upstream faults via
the mock's knobs (reset before the head, drop mid-body), a refused backend, unknown models,
bad bodies and bodies over max_body_bytes. Every response is checked against what that kind
must give (an answer, or a deliberately broken stream); anything else is an error by kind.

Prints one JSON object on stdout at the end: counts by kind and by status, errors by kind.
"""
import argparse
import http.client
import json
import random
import socket
import sys
import threading
import time

CHAT = "/v1/chat/completions"


def body(model, stream=False, extra=None):
    o = {"model": model, "messages": [{"role": "user", "content": "soak"}]}
    if stream:
        o["stream"] = True
    if extra:
        o.update(extra)
    return json.dumps(o).encode()


class Client:
    def __init__(self, host, port, timeout):
        self.host, self.port, self.timeout = host, port, timeout

    def request(self, payload, headers=None, path=CHAT):
        """Returns (status, body, complete). complete=False: the stream was cut."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            h = {"Content-Type": "application/json", "Connection": "close"}
            h.update(headers or {})
            conn.request("POST", path, body=payload, headers=h)
            resp = conn.getresponse()
            try:
                data = resp.read()
                return resp.status, data, True
            except (http.client.IncompleteRead, ConnectionError, socket.timeout) as e:
                partial = getattr(e, "partial", b"")
                return resp.status, partial, False
        finally:
            conn.close()

    def abort_after_head(self, payload, headers):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        h = {"Content-Type": "application/json"}
        h.update(headers)
        conn.request("POST", CHAT, body=payload, headers=h)
        resp = conn.getresponse()
        resp.read(1)  # a byte of the body, then gone
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        conn.close()
        return resp.status

    def abort_before_head(self, payload, delay_ms):
        s = socket.create_connection((self.host, self.port), timeout=self.timeout)
        req = (f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               f"X-Mock-Delay-Ms: {delay_ms}\r\nContent-Length: {len(payload)}\r\n\r\n").encode()
        s.sendall(req + payload)
        time.sleep(0.05)
        s.close()

    def over_limit(self, length):
        s = socket.create_connection((self.host, self.port), timeout=self.timeout)
        try:
            s.sendall((f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       f"Content-Length: {length}\r\n\r\n").encode())
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            line = data.split(b"\r\n", 1)[0].split()
            return int(line[1]) if len(line) > 1 else 0
        finally:
            s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--max-body", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    client = Client("127.0.0.1", args.port, args.timeout)
    lock = threading.Lock()
    sent = {}        # kind -> count
    codes = {}       # status -> count (what slp must have counted)
    early_aborts = [0]
    errors = {}      # kind -> [count, first example]
    stop_at = time.monotonic() + args.seconds

    def note(kind, code, problem=None):
        with lock:
            sent[kind] = sent.get(kind, 0) + 1
            if code is not None:
                codes[code] = codes.get(code, 0) + 1
            if problem:
                e = errors.setdefault(kind, [0, problem])
                e[0] += 1

    kinds = [("chat", 30), ("stream", 20), ("large", 6), ("aggregate", 6), ("abort_after_head", 6),
             ("abort_before_head", 4), ("reset_before_head", 5), ("drop_mid_body", 5),
             ("refused", 4), ("unknown_model", 4), ("bad_body", 4), ("over_limit", 3)]
    names = [k for k, _ in kinds]
    weights = [w for _, w in kinds]

    def one(rng, kind):
        if kind == "chat":
            st, b, ok = client.request(body("mock"))
            good = st == 200 and ok and b"chat.completion" in b
            note(kind, st, None if good else f"status {st} complete {ok}: {b[:120]!r}")
        elif kind == "stream":
            st, b, ok = client.request(body("mock", stream=True),
                                       {"X-Mock-Events": str(rng.randint(5, 40)),
                                        "X-Mock-Event-Interval-Ms": str(rng.choice([0, 2, 10]))})
            good = st == 200 and ok and b.rstrip().endswith(b"data: [DONE]")
            note(kind, st, None if good else f"status {st} complete {ok}: {b[-120:]!r}")
        elif kind == "large":
            n = rng.randint(1 << 20, 4 << 20)
            payload = body("mock", extra={"pad": "x" * n})
            st, b, ok = client.request(payload, {"X-Mock-Echo": "1"})
            good = st == 200 and ok and len(b) >= n
            note(kind, st, None if good else f"status {st} complete {ok} len {len(b)}")
        elif kind == "aggregate":
            st, b, ok = client.request(body("mock-agg"), {"X-Mock-Events": "8"})
            good = st == 200 and ok and b"chat.completion" in b
            note(kind, st, None if good else f"status {st}: {b[:160]!r}")
        elif kind == "abort_after_head":
            st = client.abort_after_head(body("mock", stream=True),
                                         {"X-Mock-Events": "200", "X-Mock-Event-Interval-Ms": "20"})
            note(kind, st, None if st == 200 else f"status {st}")
        elif kind == "abort_before_head":
            client.abort_before_head(body("mock"), 400)
            with lock:
                early_aborts[0] += 1
            note(kind, None)
        elif kind == "reset_before_head":
            st, b, ok = client.request(body("mock"), {"X-Mock-Reset-Before-Head": "1"})
            note(kind, st, None if st == 502 else f"status {st}: {b[:120]!r}")
        elif kind == "drop_mid_body":
            stream = rng.random() < 0.5
            # The mock counts events for a stream, bytes for a JSON body.
            hdr = {"X-Mock-Drop-After": str(rng.randint(1, 3) if stream else rng.randint(10, 200))}
            if rng.random() < 0.5:
                hdr["X-Mock-Drop-Reset"] = "1"
            st, b, ok = client.request(body("mock", stream=stream), hdr)
            # Deliberately broken: the head, then an unclean end (never a complete success).
            note(kind, st, None if (st == 200 and not ok) else f"status {st} complete {ok}")
        elif kind == "refused":
            st, b, ok = client.request(body("refused"))
            note(kind, st, None if st == 502 else f"status {st}")
        elif kind == "unknown_model":
            st, b, ok = client.request(body("no-such-model-%d" % rng.randint(0, 1 << 30)))
            note(kind, st, None if st == 404 else f"status {st}")
        elif kind == "bad_body":
            st, b, ok = client.request(rng.choice([b"{", b"[]", b'{"model":5}', b"",
                                                   b'{"model":"a","model":"b"}']))
            note(kind, st, None if st == 400 else f"status {st}")
        elif kind == "over_limit":
            st = client.over_limit(args.max_body + rng.randint(1, 1 << 20))
            note(kind, st, None if st == 413 else f"status {st}")

    def worker(i):
        rng = random.Random(args.seed * 1000 + i)
        while time.monotonic() < stop_at:
            kind = rng.choices(names, weights)[0]
            try:
                one(rng, kind)
            except Exception as e:  # a client-side failure is an error of that kind
                note(kind, None, f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.workers)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(args.seconds + args.timeout + 30)
    hung = sum(t.is_alive() for t in threads)
    print(json.dumps({"seconds": round(time.monotonic() - start, 1), "sent": sent,
                      "codes": {str(k): v for k, v in sorted(codes.items())},
                      "early_aborts": early_aborts[0], "errors": errors, "hung_workers": hung}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
