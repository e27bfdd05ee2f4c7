#!/usr/bin/env bash
# The pacer's timer lateness with idle vCPUs halting and polling, alternated run by run: does the
# machine's timer wake-up explain the send delay (summary.generator.timer_wake_late, README
# "Measuring the generator itself")?
#
#   scenarios/library/generator/timer-late-ab.sh [ROUNDS] [SCENARIO.yaml]
#
# Builds qbench from this checkout into a temporary directory (removed at the end) and runs the
# scenario (default one-producer-10k.yaml beside this script) ROUNDS times (default 3) in each
# mode: "halt" as the machine is, "poll" with `qbench run --idle-poll` (a CPU latency limit of
# 0 on /dev/cpu_dma_latency for the run: idle vCPUs poll instead of halting). One line per run on stdout: mode, load average at the start, steal %, send
# delay p50/p99 (us), timer lateness count/p50/p99/max (us), the pacer's lead p50/max (us), spin
# p99 (us), and whether the timer warning fired. Times are the machine's: compare within a
# round. Needs go, python3 and write access to /dev/cpu_dma_latency for "poll".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
rounds=${1:-3}
sc=${2:-$here/one-producer-10k.yaml}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/qbench" ./cmd/qbench)
echo "built qbench; $rounds rounds of $sc" >&2

printf 'mode\tload\tsteal_pct\tsd_p50_us\tsd_p99_us\tlate_n\tlate_p50_us\tlate_p99_us\tlate_max_us\tlead_p50_us\tlead_max_us\tspin_p99_us\ttimer_warning\n'
for round in $(seq "$rounds"); do
	for mode in halt poll; do
		flags=()
		[ $mode = poll ] && flags=(--idle-poll)
		load=$(cut -d' ' -f1 /proc/loadavg)
		echo "round $round: $mode" >&2
		"$work/qbench" run -q "${flags[@]}" "$sc" -o "$work/r.json" >/dev/null
		python3 - "$work/r.json" "$mode" "$load" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
g, sd = s["generator"], s["latency"]["send_delay"]
t, sp = g.get("timer_wake_late") or {}, g.get("pacer_spin") or {}
us = lambda v: f"{(v or 0) / 1e3:.0f}"
warn = any(w.startswith("the machine's timers woke") for w in s.get("warnings") or [])
print("\t".join([sys.argv[2], sys.argv[3], f"{100 * (s.get('machine_load') or {}).get('steal_share', 0):.1f}",
                 us(sd["p50_ns"]), us(sd["p99_ns"]), str(t.get("count", 0)), us(t.get("p50_ns")), us(t.get("p99_ns")),
                 us(t.get("max_ns")), us(g.get("pacer_lead_p50_ns")), us(g.get("pacer_lead_max_ns")), us(sp.get("p99_ns")), str(warn).lower()]))
PY
	done
done
