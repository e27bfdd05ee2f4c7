#!/usr/bin/env python3
"""A process of its own that sleeps 1 ms at a time and prints every wake-up later than
THRESHOLD ms (default 10) as `gap UNIX_SECONDS MS STEAL_MS`, STEAL_MS the steal /proc/stat
counted on the whole machine over the gap (all CPUs, in ms; 10 ms ticks). A gap it shares
with a benchmark's slow second was the machine's (hypervisor steal, other processes), not
the benchmark's engine: the canary talks to neither. Stops on SIGTERM/SIGINT.
Usage: stall-canary.py [THRESHOLD_MS] >gaps.txt &"""
import os, signal, sys, time

def steal_ms():
    with open('/proc/stat') as f:
        cols = f.readline().split()
    return int(cols[8]) * 1000 // os.sysconf('SC_CLK_TCK')

def main():
    threshold = float(sys.argv[1]) / 1e3 if len(sys.argv) > 1 else 0.010
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    last, steal = time.monotonic(), steal_ms()
    n = 0
    while True:
        time.sleep(0.001)
        now = time.monotonic()
        n += 1
        if now - last > threshold:
            s = steal_ms()
            print(f'gap {time.time() - (now - last):.3f} {(now - last) * 1e3:.1f} {s - steal}', flush=True)
            steal = s
        elif n % 100 == 0:
            steal = steal_ms()
        last = now

if __name__ == '__main__':
    try:
        main()
    except KeyboardInterrupt:
        pass
