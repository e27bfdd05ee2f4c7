#!/usr/bin/env bash
# One compare-servers cell (4 producers, 4 consumers, 4,000 msg/s, 256 B, 10 s + 2 s warm-up) on
# redis-server and on the in-repo server (child process), the engines alternated per round, with
# stall-canary.py running beside them. Per run: the load average, produce p99 over the run and
# the median and max of its per-second p99s, the server's CPU per message (its process's, the
# whole run's over the measured messages), the child server's own counts at exit
# (QBENCH_SERVER_RUNTIME_STATS: waits >= 1 ms in the runnable state, GC cycles); then each
# measured second whose slowest produce took over SLOW_MS (default 15), with that second's steal
# share and other processes' cores (qbench's machine series) and the canary's gaps within it
# (a gap means the whole machine stalled: the canary talks to neither server).
# A run's p99 is set by its worst 1% of messages: 400 of 40,000, i.e. one bad second. The median
# of per-second p99s and the slow seconds' steal tell a server's tail from the machine's.
# Usage: [ROUNDS=3] [DESIGN=stream] [ENGINES="redis server"] [SLOW_MS=15] [KEEP=DIR] \
#   engines/server/bench/cell-ab.sh [qbench-binary]
# Run from the repository root. Public tools only: go, python3. Idle CPUs poll while it runs
# unless IDLE=halt (scenarios/library/generator/machine.sh).
set -euo pipefail
. scenarios/library/generator/machine.sh
ROUNDS=${ROUNDS:-3} DESIGN=${DESIGN:-stream} ENGINES=${ENGINES:-"redis server"} SLOW_MS=${SLOW_MS:-15}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
QBENCH=${1:-$WORK/qbench}
if [ ! -x "$QBENCH" ]; then go build -o "$QBENCH" ./cmd/qbench; fi
python3 "$HERE/stall-canary.py" 10 >"$WORK/gaps" &
CANARY=$!
trap 'kill "$CANARY" 2>/dev/null || true; wait "$CANARY" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for round in $(seq "$ROUNDS"); do
  for engine in $ENGINES; do
    cat >"$WORK/s.yaml" <<YAML
name: cell-ab-$DESIGN-$engine
engine: $engine
design: $DESIGN
producers: 4
consumers: 4
rate: 4000
message_size: 256
duration: 10s
warmup: 2s
YAML
    load=$(cut -d' ' -f1 /proc/loadavg)
    QBENCH_SERVER_RUNTIME_STATS=1 "$QBENCH" run "$WORK/s.yaml" -q -o "$WORK/r.json" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
    [ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$WORK/r.json" "$KEEP/$DESIGN-$round-$engine.json"; }
    stats=$(grep -E '^runtime /(sched/latencies|gc/cycles)' "$WORK/err" | sed -E 's/^runtime //; s/:seconds//; s/:gc-cycles//; s/ n=.*>=1ms:/ >=1ms:/' | tr '\n' ' ' || true)
    python3 - "$round" "$engine" "$load" "$SLOW_MS" "$stats" "$WORK/r.json" "$WORK/gaps" <<'PY'
import datetime, json, statistics, sys
rnd, engine, load, slow_ms, stats, path, gaps_path = sys.argv[1:]
d = json.load(open(path))
lat = d['summary']['latency']
t0 = datetime.datetime.fromisoformat(d['started_at'].replace('Z', '+00:00')[:26] + '+00:00').timestamp()
gaps = []
for line in open(gaps_path):
    f = line.split()
    if len(f) == 4:
        gaps.append((float(f[1]), float(f[2]), f[3]))
secs = [p for p in d['series'] if not p.get('warmup')]
p99s = [p['produce']['p99_ns'] / 1e6 for p in secs]
cpu = d['engine'].get('stats', {}).get('proc_cpu_ns', 0) / 1e3 / max(1, lat['produce']['count'])
print(f"{d['scenario']['design']} round {rnd} {engine:6} load {load}: produce p99 {lat['produce']['p99_ns'] / 1e6:.2f} ms, "
      f"per-second p99 median {statistics.median(p99s):.2f} max {max(p99s):.2f} ms, server cpu/msg {cpu:.1f} us; {stats}")
for p in secs:
    if p['produce']['max_ns'] / 1e6 <= float(slow_ms):
        continue
    m = p.get('machine', {})
    a = t0 + p['start_ns'] / 1e9
    # started_at precedes the series' zero (the producers' start) by the connections' setup:
    # the canary's gaps are matched to the second +- 0.2 s.
    g = [f'{ms}ms(steal {st}ms)' for at, ms, st in gaps if a - 0.2 <= at < a + 1.2 and ms >= float(slow_ms) / 2]
    print(f"  second {p['start_ns'] / 1e9:4.1f}: p99 {p['produce']['p99_ns'] / 1e6:.1f} max {p['produce']['max_ns'] / 1e6:.1f} ms, "
          f"steal {100 * m.get('steal_share', 0):.1f}%, other {m.get('other_cores', 0):.2f} cores; canary gaps: {' '.join(g) or 'none'}")
PY
  done
done
