#!/usr/bin/env bash
# The latency floor against redis-benchmark -c 1 on the same idle redis-server, interleaved:
#   scenarios/bench/floor-vs-redis-benchmark.sh [ROUNDS]
# Starts redis-server (no persistence) on a free loopback port, then ROUNDS times (default 3)
# runs redis-benchmark -c 1 LPUSH of 256 B and qbench's floor-list scenario (1,000 msg/s, 1+1,
# list) against it, and prints produce p50/p99 and e2e p99 beside redis-benchmark's p50/p99, with
# the ratios. Run it on a quiet machine: nothing else running. Needs redis-server,
# redis-benchmark, go, python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
work="$(mktemp -d)"
pid=""
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" --logfile "$work/redis.log" &
pid=$!
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
go build -o "$work/qbench" ./cmd/qbench
sed -e "s/^engine: redis$/engine: redis-url\naddress: 127.0.0.1:${port}/" scenarios/bench/floor-list.yaml >"$work/floor.yaml"

printf '%-6s %-16s %10s %10s %10s\n' round tool p50_us p99_us e2e_p99_us
for r in $(seq "$rounds"); do
	redis-benchmark -p "$port" -c 1 -n 20000 -d 256 -t lpush --csv 2>/dev/null | tail -1 >"$work/rb.csv"
	"$work/qbench" run -q "$work/floor.yaml" -o "$work/q.json" >/dev/null
	python3 - "$r" "$work/rb.csv" "$work/q.json" <<'PY'
import csv, json, sys
r, rb, q = sys.argv[1], sys.argv[2], sys.argv[3]
row = next(csv.reader(open(rb)))
rb50, rb99 = float(row[4]) * 1000, float(row[6]) * 1000
lat = json.load(open(q))["summary"]["latency"]
p50, p99, e99 = lat["produce"]["p50_ns"] / 1e3, lat["produce"]["p99_ns"] / 1e3, lat["e2e"]["p99_ns"] / 1e3
print(f"{r:<6} {'redis-benchmark':<16} {rb50:10.0f} {rb99:10.0f} {'':>10}")
print(f"{r:<6} {'qbench':<16} {p50:10.0f} {p99:10.0f} {e99:10.0f}")
print(f"{r:<6} {'ratio':<16} {p50/rb50:10.2f} {p99/rb99:10.2f} {e99/p99:10.2f}  (qbench/redis-benchmark; e2e p99/produce p99)")
PY
done
