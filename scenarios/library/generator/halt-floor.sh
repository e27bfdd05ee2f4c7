#!/usr/bin/env bash
# The floor with idle vCPUs halting (the VM's default: no idle-poll hold), beside a client with
# nothing of qbench in it, to tell qbench's own episodes from the machine's:
#   scenarios/library/generator/halt-floor.sh [ROUNDS] [OUT_DIR]
# Starts redis-server (no persistence) on a free loopback port, then ROUNDS times (default 4) runs
# floor-list.yaml (1,000 msg/s, 1+1, list) with a runtime trace, then paced-reference.py (the same
# shape in Python, raw sockets), and prints each one's produce p50/p99 with the run's steal. The
# traces and result files stay in OUT_DIR (default: a temp dir, removed) for `go tool trace`.
# Run it on a quiet machine. Needs redis-server, redis-cli, go, jq, python3.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds="${1:-4}" keep="${2:-}"
work="$(mktemp -d)" pid=""
out="${keep:-$work}"; mkdir -p "$out"
. scenarios/library/generator/redis-server.sh
cleanup() { redis_stop; rm -rf "$work"; }
trap cleanup EXIT
redis_start "$work"
go build -o "$work/qbench" ./cmd/qbench
sed -e "s/^engine: redis$/engine: redis-url\naddress: 127.0.0.1:${port}/" scenarios/library/generator/floor-list.yaml >"$work/f.yaml"
printf '%-6s %-8s %10s %10s %14s %8s\n' round tool p50_us p99_us send_delay_p99 steal_%
for r in $(seq "$rounds"); do
	"$work/qbench" run -q --trace "$out/t$r.trace" "$work/f.yaml" -o "$out/o$r.json" >/dev/null
	jq -r --arg r "$r" '.summary | [$r, "qbench", (.latency.produce.p50_ns/1000|floor), (.latency.produce.p99_ns/1000|floor), (.latency.send_delay.p99_ns/1000|floor), ((.machine_load.steal_share // 0)*100|floor)] | @tsv' "$out/o$r.json" |
		awk -F'\t' '{printf "%-6s %-8s %10s %10s %14s %8s\n", $1, $2, $3, $4, $5, $6}'
	python3 scenarios/library/generator/paced-reference.py "$port" 1000 8 2 |
		awk -v r="$r" '{for (i = 1; i < NF; i++) v[$i] = $(i + 1); printf "%-6s %-8s %10s %10s %14s %8s\n", r, "python", v["produce_p50_us"], v["produce_p99_us"], "-", "-"}'
	redis-cli -p "$port" del qbench-floor >/dev/null
done
