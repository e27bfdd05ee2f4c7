#!/usr/bin/env bash
# The list push/pop paths' cost, two revisions alternated (written to weigh tracking Redis's
# quicklist nodes on every push and pop, commit eef3f59, against computing them at DUMP time):
#
#   engines/server/bench/list-nodes-ab.sh [REV_A] [REV_B] [ROUNDS]
#
# Exports REV_A (default main) and REV_B (default HEAD) of this checkout with git archive into a
# temporary directory (removed at the end), gives REV_A HEAD's store/list_bench_test.go (its
# benchmarks use only API both have), builds the store and server test binaries of each, then
# runs ROUNDS times (default 5), A and B alternately, the store list benchmarks
# (BenchmarkListPushLeftPopRight, BenchmarkListQueue: RPUSH then LPOP of ints, 10 B, 256 B) and
# the server's RPUSH+LPOP (BenchmarkExecuteQueue, given to REV_A too), LPUSH
# (BenchmarkExecute/lpush), reliable-list ack (BenchmarkLremAck) and LSET/LINSERT+LREM
# (BenchmarkListEdit), each -benchtime 200ms on one CPU. One line per
# benchmark and run on stdout: round, revision, load average, benchmark, ns/op, B/op,
# allocs/op. ns/op is wall time (compare within a round, quote ranges); allocs/op and B/op do
# not depend on the load. Progress on stderr. Idle CPUs poll unless IDLE=halt (machine.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
. "$repo/scenarios/library/generator/machine.sh"
rev_a=${1:-main}
rev_b=${2:-HEAD}
rounds=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for w in a b; do
	rev=$rev_a
	[ $w = b ] && rev=$rev_b
	mkdir -p "$work/src-$w"
	git -C "$repo" archive "$rev" | tar -x -C "$work/src-$w"
done
git -C "$repo" show "$rev_b:engines/server/store/list_bench_test.go" >"$work/src-a/engines/server/store/list_bench_test.go"
git -C "$repo" show "$rev_b:engines/server/list_queue_bench_test.go" >"$work/src-a/engines/server/list_queue_bench_test.go"
for w in a b; do
	echo "building $w" >&2
	(cd "$work/src-$w/engines/server" && go test -c -o "$work/store-$w.test" ./store && go test -c -o "$work/server-$w.test" .)
done
run() { # round, side
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	{
		"$work/store-$2.test" -test.run '^$' -test.bench 'ListPushLeftPopRight|ListQueue' -test.benchtime 200ms -test.cpu 1 -test.benchmem
		"$work/server-$2.test" -test.run '^$' -test.bench 'ExecuteQueue|Execute/lpush|LremAck|ListEdit' -test.benchtime 200ms -test.cpu 1 -test.benchmem
	} | awk -v r="$1" -v s="$2" -v l="$load" '/^Benchmark/ { print r, s, l, $1, $3, $5, $7 }'
}
echo "round rev load benchmark ns/op B/op allocs/op"
for r in $(seq 1 "$rounds"); do
	echo "round $r" >&2
	run "$r" a
	run "$r" b
done
