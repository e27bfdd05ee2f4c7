#!/usr/bin/env bash
# The generator's send-delay stalls, two revisions alternated: GC cycles, the longest
# stop-the-world pause (GODEBUG=gctrace=1) and send delay p99 / max per run.
#
#   scenarios/library/generator/stalls-ab.sh [REV_A] [REV_B] [ROUNDS] [SCENARIO.yaml...]
#
# Builds qbench at REV_A (default main) and REV_B (default HEAD) from this checkout (git
# worktrees in a temporary directory, removed at the end), then runs each scenario (default
# one-producer-10k.yaml and e2e-200k-list.yaml beside this script) ROUNDS times (default 3), A
# and B alternately. One line per run on stdout: scenario, revision, load average at the start,
# GC cycles, longest STW pause (ms), send delay p99 and max (ms). qbench starts and stops its
# own redis-server. Times are the machine's: compare within a round. Needs go, git and jq.
# Idle CPUs poll while it runs unless IDLE=halt (machine.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/machine.sh" # idle CPUs poll while it runs unless IDLE=halt
repo=$(cd "$here/../../.." && pwd)
rev_a=${1:-main}
rev_b=${2:-HEAD}
rounds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=("$here/one-producer-10k.yaml" "$here/e2e-200k-list.yaml")
work=$(mktemp -d)
cleanup() {
	for w in a b; do git -C "$repo" worktree remove --force "$work/src-$w" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

for w in a b; do
	rev=$rev_a; [ $w = b ] && rev=$rev_b
	git -C "$repo" worktree add --detach -q "$work/src-$w" "$(git -C "$repo" rev-parse "$rev")"
	(cd "$work/src-$w" && go build -o "$work/qbench-$w" ./cmd/qbench)
	echo "built $w = $rev ($(git -C "$repo" rev-parse --short "$rev"))" >&2
done

printf 'scenario\trev\tload\tgc_cycles\tmax_stw_ms\tsend_delay_p99_ms\tsend_delay_max_ms\n'
for sc in "${scenarios[@]}"; do
	for round in $(seq "$rounds"); do
		for w in a b; do
			load=$(cut -d' ' -f1 /proc/loadavg)
			GODEBUG=gctrace=1 "$work/qbench-$w" run -q "$sc" -o "$work/r.json" >/dev/null 2>"$work/err" || true
			gcs=$(grep -c '^gc ' "$work/err" || true)
			# "gc N @Ts P%: A+B+C ms clock": A (sweep termination) and C (mark termination) stop the world.
			stw=$(awk '/^gc /{split($5,a,"+"); if (a[1]+0>m) m=a[1]+0; if (a[3]+0>m) m=a[3]+0} END{print m+0}' "$work/err")
			sd=$(jq -r '.summary.latency.send_delay | "\(.p99_ns/1e6)\t\(.max_ns/1e6)"' "$work/r.json" 2>/dev/null || printf 'n/a\tn/a')
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$sc" .yaml)" "$w" "$load" "$gcs" "$stw" "$sd"
			rm -f "$work/r.json"
		done
	done
done
