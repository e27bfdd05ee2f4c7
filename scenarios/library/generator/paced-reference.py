#!/usr/bin/env python3
"""A paced reference client for the latency floor, with nothing of qbench in it.

    paced-reference.py PORT [RATE] [SECONDS] [WARMUP]

One producer process sends LPUSH of 256 B at RATE msg/s (default 1,000) for SECONDS (default 12)
to a redis-server on 127.0.0.1:PORT, and one consumer process pops them with BRPOP: the floor
scenario's shape (1+1, list) in the Python standard library (raw sockets, no client library).
The producer sleeps until 150 us before each due time and spins the rest, as qbench's pacer
does, and measures each reply from the due time (latency from the intended send time); the
consumer measures end to end from the stamp in the message (CLOCK_MONOTONIC, one machine).
The first WARMUP seconds (default 2) are left out. Prints one line:
    produce_p50_us P produce_p99_us P e2e_p99_us P n N
It exists to tell what pacing costs on this machine from what qbench costs: redis-benchmark -c 1
never paces (each request follows the last reply), so it never lets the server or itself fall
idle between messages.
"""
import socket
import subprocess
import sys
import time

SIZE = 256


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exactly(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise SystemExit("connection closed")
        buf += chunk
    return buf


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else 0


def consume(port, key, n, skip):
    s = connect(port)
    cmd = b"*3\r\n$5\r\nBRPOP\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(key), key)
    reply_len = len(b"*2\r\n$%d\r\n%s\r\n$%d\r\n" % (len(key), key, SIZE)) + SIZE + 2
    e2e = []
    for i in range(n):
        s.sendall(cmd)
        reply = recv_exactly(s, reply_len)
        now = time.monotonic_ns()
        stamp = int(reply[-SIZE - 2:-SIZE + 18])
        if i >= skip:
            e2e.append(now - stamp)
    print(percentile(e2e, 0.99))


def produce(port, rate, seconds, warmup):
    key = b"floorref:%d" % time.monotonic_ns()
    n, skip = int(rate * seconds), int(rate * warmup)
    consumer = subprocess.Popen([sys.executable, __file__, "--consume", str(port), key.decode(), str(n), str(skip)],
                                stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # the consumer is connected and blocked before the first message
    s = connect(port)
    head = b"*3\r\n$5\r\nLPUSH\r\n$%d\r\n%s\r\n$%d\r\n" % (len(key), key, SIZE)
    interval = 1e9 / rate
    lat = []
    t0 = time.monotonic_ns() + 1_000_000
    for i in range(n):
        due = t0 + int(i * interval)
        while True:
            now = time.monotonic_ns()
            if now >= due:
                break
            if due - now > 200_000:
                time.sleep((due - now - 150_000) / 1e9)
        stamp = b"%020d" % time.monotonic_ns()
        s.sendall(head + stamp + b"x" * (SIZE - len(stamp)) + b"\r\n")
        if not recv_exactly(s, 1).startswith(b":"):
            raise SystemExit("LPUSH failed")
        while not s.recv(64).endswith(b"\r\n"):  # the rest of the integer reply
            pass
        if i >= skip:
            lat.append(time.monotonic_ns() - due)
    e2e = int(consumer.communicate(timeout=30)[0])
    print(f"produce_p50_us {percentile(lat, 0.5) / 1e3:.0f} produce_p99_us {percentile(lat, 0.99) / 1e3:.0f} "
          f"e2e_p99_us {e2e / 1e3:.0f} n {len(lat)}")


if __name__ == "__main__":
    if sys.argv[1] == "--consume":
        consume(int(sys.argv[2]), sys.argv[3].encode(), int(sys.argv[4]), int(sys.argv[5]))
    else:
        a = sys.argv[1:] + [None] * 3
        produce(int(a[0]), float(a[1] or 1000), float(a[2] or 12), float(a[3] or 2))
