#!/usr/bin/env bash
# The latency floor against redis-benchmark -c 1 on the same idle redis-server, interleaved:
#   scenarios/library/generator/floor-vs-redis-benchmark.sh [ROUNDS]
# Starts redis-server (no persistence) on a free loopback port, then ROUNDS times (default 3)
# runs, one after the other against it:
#   redis-benchmark -c 1 LPUSH of 256 B (closed loop: each request follows the last reply);
#   qbench's floor-list scenario (1,000 msg/s, 1+1, list: paced);
#   qbench's floor-closed scenario (1+1, list, rate: max with one message in flight: closed loop,
#     redis-benchmark's shape, so qbench's own path is compared like with like);
#   paced-reference.py (1,000 msg/s, 1+1, list, Python's standard library and raw sockets: what
#     pacing itself costs on this machine, with nothing of qbench or Go in it);
#   qbench as two processes (floor-produce.yaml and floor-consume.yaml at once: floor-list's
#     pacing, the producer and the consumer each in a process of its own, one segment 0/1 each of
#     one --run-id and --start-at so the consumer's end-to-end latency is on one clock);
#   floor-produce.yaml alone (the producer with no consumer anywhere: one process, produce only);
# and prints each one's produce p50/p99 (and e2e p99), with the ratios to redis-benchmark, and
# the round's machine state (load average, steal, other processes' CPU: machine.sh).
# Run it on a quiet machine: nothing else running. Needs redis-server, redis-benchmark, go,
# python3.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds="${1:-3}"
. scenarios/library/generator/machine.sh
work="$(mktemp -d)"
pid=""
. scenarios/library/generator/redis-server.sh
cleanup() { redis_stop; rm -rf "$work"; }
trap cleanup EXIT

redis_start "$work"
go build -o "$work/qbench" ./cmd/qbench
for f in floor-list floor-closed floor-produce floor-consume; do
	sed -e "s/^engine: redis$/engine: redis-url\naddress: 127.0.0.1:${port}/" "scenarios/library/generator/$f.yaml" >"$work/$f.yaml"
done

printf '%-6s %-16s %10s %10s %10s\n' round tool p50_us p99_us e2e_p99_us
for r in $(seq "$rounds"); do
	machine_mark
	redis-benchmark -p "$port" -c 1 -n 20000 -d 256 -t lpush --csv 2>/dev/null | tail -1 >"$work/rb.csv"
	"$work/qbench" run -q "$work/floor-list.yaml" -o "$work/q.json" >/dev/null
	"$work/qbench" run -q "$work/floor-closed.yaml" -o "$work/c.json" >/dev/null
	python3 scenarios/library/generator/paced-reference.py "$port" 1000 12 2 >"$work/py.txt"
	redis-cli -p "$port" del qbench-floor >/dev/null
	start=$(($(date +%s%3N) + 2000))
	"$work/qbench" run -q "$work/floor-consume.yaml" --segment 0/1 --start-at "$start" --run-id "floor2p-$r" -o "$work/2c.json" >/dev/null &
	cons=$!
	"$work/qbench" run -q "$work/floor-produce.yaml" --segment 0/1 --start-at "$start" --run-id "floor2p-$r" -o "$work/2p.json" >/dev/null
	wait "$cons"
	redis-cli -p "$port" del qbench-floor >/dev/null
	"$work/qbench" run -q "$work/floor-produce.yaml" -o "$work/po.json" >/dev/null
	redis-cli -p "$port" del qbench-floor >/dev/null
	python3 - "$r" "$work/rb.csv" "$work/q.json" "$work/c.json" "$work/py.txt" "$work/2p.json" "$work/2c.json" "$work/po.json" <<'PY'
import csv, json, sys
r, rb, q, c, py, tp, tc, po = sys.argv[1:9]
row = next(csv.reader(open(rb)))
rb50, rb99 = float(row[4]) * 1000, float(row[6]) * 1000
def qb(path):
    lat = json.load(open(path))["summary"]["latency"]
    return lat["produce"]["p50_ns"] / 1e3, lat["produce"]["p99_ns"] / 1e3, lat["e2e"]["p99_ns"] / 1e3
p50, p99, e99 = qb(q)
c50, c99, ce99 = qb(c)
f = open(py).read().split()
y50, y99, ye99 = float(f[1]), float(f[3]), float(f[5])
print(f"{r:<6} {'redis-benchmark':<16} {rb50:10.0f} {rb99:10.0f} {'':>10}")
print(f"{r:<6} {'qbench':<16} {p50:10.0f} {p99:10.0f} {e99:10.0f}")
print(f"{r:<6} {'ratio':<16} {p50/rb50:10.2f} {p99/rb99:10.2f} {e99/p99:10.2f}  (qbench/redis-benchmark; e2e p99/produce p99)")
print(f"{r:<6} {'qbench closed':<16} {c50:10.0f} {c99:10.0f} {'':>10}  ratio {c50/rb50:.2f} {c99/rb99:.2f} (closed loop, like redis-benchmark)")
print(f"{r:<6} {'python paced':<16} {y50:10.0f} {y99:10.0f} {ye99:10.0f}  ratio {y50/rb50:.2f} {y99/rb99:.2f}; qbench/python {p50/y50:.2f} {p99/y99:.2f}")
t50, t99, _ = qb(tp)
_, _, te99 = qb(tc)
print(f"{r:<6} {'qbench 2 procs':<16} {t50:10.0f} {t99:10.0f} {te99:10.0f}  ratio {t50/rb50:.2f} {t99/rb99:.2f}; /python {t50/y50:.2f} {t99/y99:.2f} (producer and consumer in two processes)")
o50, o99, _ = qb(po)
print(f"{r:<6} {'qbench no cons':<16} {o50:10.0f} {o99:10.0f} {'':>10}  ratio {o50/rb50:.2f} {o99/rb99:.2f}; /python {o50/y50:.2f} {o99/y99:.2f} (floor-produce.yaml alone: no consumer)")
PY
	machine_line "$r     "
done
