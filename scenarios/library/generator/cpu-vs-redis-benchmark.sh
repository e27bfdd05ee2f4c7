#!/usr/bin/env bash
# qbench's CPU per message against redis-benchmark's CPU per request, on one redis-server.
#
#   scenarios/library/generator/cpu-vs-redis-benchmark.sh [SCENARIO.yaml] [ROUNDS]
#
# Starts a redis-server (memory only) on a free loopback port, then alternately, ROUNDS times
# (default 3): `redis-benchmark -c 4 -P 16 -n 2000000 -d 256 -t lpush` and `qbench run` of the
# scenario (default cpu-per-message-list.yaml beside this script; a copy with engine redis-url and
# this server's address), each under /usr/bin/time. It prints user+sys CPU per request for
# redis-benchmark, per message (sent + received) for qbench, the ratio, and the redis-server's
# CPU over each run, and after each round its machine state (load average, steal, other
# processes' CPU: machine.sh). The server is stopped by its PID. Needs redis-server, redis-benchmark,
# redis-cli, /usr/bin/time, jq and go.
#
# Environment: QBENCH (a built qbench binary; otherwise built from this checkout),
# BENCH_N (redis-benchmark requests, default 2000000), CPUPROFILE_DIR (pprof profiles of qbench).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# A lone number is the rounds.
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then set -- "$here/cpu-per-message-list.yaml" "$1"; fi
scenario=${1:-$here/cpu-per-message-list.yaml}
rounds=${2:-3}
[ -f "$scenario" ] || { echo "no scenario file $scenario" >&2; exit 2; }
n=${BENCH_N:-2000000}
work=$(mktemp -d)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

qbench=${QBENCH:-}
if [ -z "$qbench" ]; then
	(cd "$here/../../.." && go build -o "$work/qbench" ./cmd/qbench)
	qbench=$work/qbench
fi

. "$here/redis-server.sh"
redis_start "$work"
server_pid=$pid

# The scenario's own engine (redis: a server of its own) becomes this server.
sed -e "s/^engine: redis\b.*/engine: redis-url\naddress: 127.0.0.1:$port/" -e '/^address: /d' "$scenario" >"$work/scenario.yaml"
grep -q "^address: 127.0.0.1:$port" "$work/scenario.yaml" || { echo "$scenario: engine must be redis or redis-url" >&2; exit 1; }
hz=$(getconf CLK_TCK)
# server_cpu prints the redis-server's user+sys CPU so far, in seconds.
server_cpu() { awk -v hz="$hz" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$server_pid/stat"; }
# cpu_of prints user+sys seconds from a /usr/bin/time -f '%U %S' file.
cpu_of() { awk '{ printf "%.3f", $1 + $2 }' "$1"; }

echo "redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port (pid $server_pid); scenario $(basename "$scenario")"
printf '%-5s %-16s %12s %12s %14s %12s\n' round tool cpu_s units us_per_unit server_cpu_s
sum_b=0; sum_q=0
. "$here/machine.sh"
for r in $(seq "$rounds"); do
	machine_mark
	s0=$(server_cpu)
	/usr/bin/time -f '%U %S' -o "$work/time.b" redis-benchmark -p "$port" -c 4 -P 16 -n "$n" -d 256 -t lpush -q >/dev/null
	s1=$(server_cpu)
	redis-cli -p "$port" flushall >/dev/null
	cb=$(cpu_of "$work/time.b")
	ub=$(awk -v c="$cb" -v n="$n" 'BEGIN { printf "%.3f", c / n * 1e6 }')
	printf '%-5s %-16s %12s %12s %14s %12s\n' "$r" redis-benchmark "$cb" "$n" "$ub" "$(awk -v a="$s0" -v b="$s1" 'BEGIN{printf "%.3f", b-a}')"

	prof=()
	[ -n "${CPUPROFILE_DIR:-}" ] && prof=(--cpuprofile "$CPUPROFILE_DIR/qbench-$r.pprof")
	s0=$(server_cpu)
	/usr/bin/time -f '%U %S' -o "$work/time.q" "$qbench" run -q "${prof[@]}" -o "$work/result.json" "$work/scenario.yaml" >"$work/summary.txt"
	s1=$(server_cpu)
	redis-cli -p "$port" flushall >/dev/null
	cq=$(cpu_of "$work/time.q")
	msgs=$(jq '.summary.ledger.sent + .summary.ledger.deliveries' "$work/result.json")
	uq=$(awk -v c="$cq" -v n="$msgs" 'BEGIN { printf "%.3f", c / n * 1e6 }')
	printf '%-5s %-16s %12s %12s %14s %12s\n' "$r" qbench "$cq" "$msgs" "$uq" "$(awk -v a="$s0" -v b="$s1" 'BEGIN{printf "%.3f", b-a}')"
	machine_line "$r    "
	sum_b=$(awk -v a="$sum_b" -v b="$ub" 'BEGIN{print a+b}')
	sum_q=$(awk -v a="$sum_q" -v b="$uq" 'BEGIN{print a+b}')
done
awk -v b="$sum_b" -v q="$sum_q" -v r="$rounds" 'BEGIN {
	printf "mean: redis-benchmark %.3f us/request, qbench %.3f us/message (sent + received), ratio %.2f\n", b/r, q/r, q/b }'
