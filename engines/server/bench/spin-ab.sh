#!/usr/bin/env bash
# The event loop's adaptive poll before it blocks (QBENCH_SERVER_LOOP_SPIN_US, evloop_linux.go)
# at each setting, alternated run by run (so drift on a shared machine hits every setting alike):
#   1. vs-redis.sh's unpipelined cells (CELLS, default "xadd lpush rpop"; ROUNDS rounds each,
#      QUOTA and GOMAXPROCS passed through): per setting and run, ours/Redis req/s and CPU per
#      request, then its second table: client CPU us and context switches per request, the
#      servers' context switches per request;
#   2. light load, our server alone: its CPU over IDLE seconds idle right after a burst (ticks,
#      10 ms each: a loop that kept polling would show ~100 per second), then redis-benchmark
#      -c 1 LPUSH (one request in flight): server CPU us/req, server voluntary context switches
#      per request, client CPU us/req, p50 latency (ms), and the loop's polls over the whole
#      server run (INFO stats loop_spin_hits / loop_spins: the burst, the idle time, the -c 1 run).
# Usage: [SETTINGS="0 30"] [REPS=2] [ROUNDS=2] [N=100000] [IDLE_S=3] [SKIP_CELLS=1] [QUOTA=C] [GOMAXPROCS=n]
#        engines/server/bench/spin-ab.sh [qbench-binary]
# Run from the repository root. Progress on stderr, tables on stdout.
set -euo pipefail
SETTINGS=${SETTINGS:-0 30} REPS=${REPS:-2} ROUNDS=${ROUNDS:-2} N=${N:-100000} IDLE_S=${IDLE_S:-3}
CELLS=${CELLS:-xadd lpush rpop}
. "$(dirname "$0")/servers.sh"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); settings (us): $SETTINGS; quota: ${QUOTA:-none}; GOMAXPROCS: ${GOMAXPROCS:-default}"
light() { # setting -> one row of the light-load table
  local k0 k1 c0 c1 r
  QBENCH_SERVER_LOOP_SPIN_US=$1 start q none
  redis-benchmark -p "$PORT" -c 50 -n 20000 -d 256 -t lpush -q >/dev/null 2>&1
  k0=$(ticks); sleep "$IDLE_S"; k1=$(ticks)
  local idle=$((k1 - k0))
  c0=($(csw)); k0=$(ticks)
  r=$(/usr/bin/time -f '%U %S' -o "$WORK/time" redis-benchmark -p "$PORT" -c 1 -n 20000 -d 256 -t lpush --csv 2>/dev/null | tail -1 | tr -d '"')
  k1=$(ticks); c1=($(csw))
  local sp; sp=$(redis-cli -p "$PORT" info stats | tr -d '\r' | awk -F: '$1=="loop_spins"{s=$2} $1=="loop_spin_hits"{h=$2} END{print s+0, h+0}')
  stop
  awk -v s="$1" -v idle="$idle" -v k=$((k1 - k0)) -v tck="$TCK" -v n=20000 -v r="$r" -v sv=$((c1[0] - c0[0])) -v c="$(tail -1 "$WORK/time")" -v sp="$sp" '
    BEGIN { split(r, f, ","); split(c, u, " "); split(sp, p, " ")
            printf "| %s | %d | %.0f | %.2f | %.3f | %.2f | %s | %d / %d |\n", s, idle, f[2], k / tck / n * 1e6, sv / n, (u[1] + u[2]) / n * 1e6, f[5], p[2], p[1] }'
}
if [ -z "${SKIP_CELLS:-}" ]; then
  echo; echo "unpipelined cells against Redis, one vs-redis.sh run per setting and repetition (ours/Redis):"
  echo; echo "| spin us | rep | cell | req/s ratio, median (min-max) | CPU/req ratio | client CPU us/req | client vol. cs/req | client invol. cs/req | server vol. cs/req | server invol. cs/req | server CPU % | throttled % |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for rep in $(seq "$REPS"); do
    for s in $SETTINGS; do
      echo "cells: spin $s us, repetition $rep" >&2
      QBENCH_SERVER_LOOP_SPIN_US=$s CELLS="$CELLS" PIPES=1 ROUNDS=$ROUNDS N=$N SKIP_ALWAYS=1 SKIP_MEM=1 \
        "$(dirname "$0")/vs-redis.sh" "$QBENCH" >"$WORK/vs" 2>"$WORK/vs.err" || { cat "$WORK/vs.err" >&2; exit 1; }
      awk -F'|' -v s="$s" -v rep="$rep" '
        /^client cost/ { t2 = 1 }
        /^per round/ { t2 = 0; t3 = 1 }
        !t2 && !t3 && / -P 1 \|/ { ratio[$2] = $5; cpu[$2] = $8 }
        t2 && / -P 1 \|/ { printf "| %s | %s |%s|%s|%s|", s, rep, $2, ratio[$2], cpu[$2]; for (i = 3; i < NF; i++) printf "%s|", $i; print "" }' "$WORK/vs"
    done
  done
fi
echo; echo "light load, our server alone (idle: CPU ticks over ${IDLE_S} s right after a burst; then redis-benchmark -c 1 LPUSH):"
echo; echo "| spin us | idle ticks | -c 1 req/s | server CPU us/req | server vol. cs/req | client CPU us/req | p50 ms | polls that found work / polls (whole run) |"
echo "|---|---|---|---|---|---|---|---|"
for rep in $(seq "$REPS"); do for s in $SETTINGS; do echo "light: spin $s us, repetition $rep" >&2; light "$s"; done; done
echo; echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
