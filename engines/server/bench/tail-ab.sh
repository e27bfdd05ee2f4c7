#!/usr/bin/env bash
# The in-repo server's light-load tail, A/B: compare-servers' cells (4 producers, 4 consumers,
# 4,000 msg/s, 256 B, 10 s + 2 s warm-up) on the server as a child process, once per setting
# per round, the settings alternated (drift on a shared machine hits all alike). Per run: the
# setting, the load average, produce and end-to-end p50/p99/p99.9 (ms), the server's CPU per
# message (us), and the child's own counts at exit (QBENCH_SERVER_RUNTIME_STATS): how long its
# goroutines waited runnable (/sched/latencies: the count of waits >= 100 us and >= 1 ms does
# not depend on the machine's load as the latencies do) and its GC cycles.
# Usage: [ROUNDS=3] [DESIGNS="list stream pubsub reliable-list"] \
#   engines/server/bench/tail-ab.sh [qbench-binary] [VAR=value ...]
# With no VAR=value the settings are QBENCH_SERVER_LOOP_YIELD_WOKEN=0 and =1.
# Run from the repository root. Public tools only: go, python3. Idle CPUs poll while it runs
# unless IDLE=halt (scenarios/library/generator/machine.sh).
set -euo pipefail
. scenarios/library/generator/machine.sh
ROUNDS=${ROUNDS:-3} DESIGNS=${DESIGNS:-"list stream pubsub reliable-list"}
WORK=$(mktemp -d)
QBENCH=$WORK/qbench
if [ $# -gt 0 ] && [[ $1 != *=* ]]; then QBENCH=$1; shift; fi
if [ ! -x "$QBENCH" ]; then go build -o "$QBENCH" ./cmd/qbench; fi
trap 'rm -rf "$WORK"' EXIT
SETTINGS=("$@")
[ ${#SETTINGS[@]} -gt 0 ] || SETTINGS=(QBENCH_SERVER_LOOP_YIELD_WOKEN=0 QBENCH_SERVER_LOOP_YIELD_WOKEN=1)
for design in $DESIGNS; do
  cat >"$WORK/s.yaml" <<YAML
name: tail-ab-$design
engine: server
design: $design
producers: 4
consumers: 4
rate: 4000
message_size: 256
duration: 10s
warmup: 2s
YAML
  for round in $(seq "$ROUNDS"); do
    for v in "${SETTINGS[@]}"; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      env "$v" QBENCH_SERVER_RUNTIME_STATS=1 "$QBENCH" run "$WORK/s.yaml" -q -o "$WORK/r.json" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
      stats=$(grep -E '^runtime /(sched/latencies|gc/cycles)' "$WORK/err" | sed -E 's/^runtime //; s/:seconds//; s/ p50.*>=100us/ >=100us/' | tr '\n' ' ')
      python3 - "$design" "$round" "$v" "$load" "$stats" "$WORK/r.json" <<'PY'
import json, sys
design, rnd, v, load, stats, path = sys.argv[1:]
d = json.load(open(path))
lat = d['summary']['latency']
def q(k): return '/'.join('%.2f' % (lat[k][p] / 1e6) for p in ('p50_ns', 'p99_ns', 'p99_9_ns'))
msgs = max(1, lat['produce']['count'])
cpu = d['engine']['stats'].get('proc_cpu_ns', 0) / 1e3 / msgs
print(f'{design} round {rnd} {v} load {load}: produce {q("produce")} e2e {q("e2e")} ms, server cpu/msg {cpu:.1f} us; {stats}')
PY
    done
  done
done
