#!/usr/bin/env python3
"""What an idle gap before a request costs on this machine, with nothing of qbench or Go in it.

    python3 scenarios/library/generator/idle-gap.py PORT [REQUESTS_PER_GAP] [GAPS_US]

One raw socket (TCP_NODELAY) to a Redis server on 127.0.0.1:PORT sends LPUSH of 256 bytes to the
key qbench-idle-gap (deleted at the end), one request at a time, each after an idle gap: the
client either sleeps the gap (time.sleep) or spins it (a busy loop), then times the request from
its send to its reply (blocking recv). Gap 0 is redis-benchmark -c 1's shape (each request follows
the last reply); a gap of 1000 us is a client paced at 1,000 msg/s. Gaps are interleaved request
by request (each gap's requests are spread over the whole run, so drift hits all alike). Gap 0 has one
mode (none). Prints one line per gap and mode on stdout: p50, p90, p99 in microseconds.

Default REQUESTS_PER_GAP 2000, GAPS_US 0,20,100,200,500,1000.
"""
import socket
import sys
import time


def main():
    port = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    gaps = [int(g) for g in (sys.argv[3] if len(sys.argv) > 3 else "0,20,100,200,500,1000").split(",")]
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = b"qbench-idle-gap"
    cmd = b"*3\r\n$5\r\nLPUSH\r\n$%d\r\n%s\r\n$256\r\n%s\r\n" % (len(key), key, b"x" * 256)
    pc = time.perf_counter_ns
    cells = [(g, m) for g in gaps for m in (("sleep", "spin") if g else ("none",))]
    lat = {c: [] for c in cells}
    for _ in range(n):
        for gap, mode in cells:
            if gap:
                if mode == "spin":
                    end = pc() + gap * 1000
                    while pc() < end:
                        pass
                else:
                    time.sleep(gap / 1e6)
            t0 = pc()
            s.sendall(cmd)
            if not s.recv(64).startswith(b":"):
                sys.exit("unexpected reply")
            lat[(gap, mode)].append(pc() - t0)
    s.sendall(b"*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n" % (len(key), key))
    s.recv(64)
    print("gap_us mode  p50_us p90_us p99_us")
    for gap, mode in cells:
        v = sorted(lat[(gap, mode)])
        q = lambda f: v[min(len(v) - 1, int(len(v) * f))] / 1e3
        print(f"{gap:6d} {mode:5s} {q(0.5):6.1f} {q(0.9):6.1f} {q(0.99):6.1f}")


if __name__ == "__main__":
    main()
