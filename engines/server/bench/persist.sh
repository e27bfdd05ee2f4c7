#!/usr/bin/env bash
# Side-by-side persistence benchmark: redis-benchmark against the in-repo server (qbench serve)
# and redis-server 7.0 with the same appendfsync, for 1, 10 and 50 clients, then replay speed.
# Usage: [ROUNDS=3] [REPLAY_N=1000000] [SKIP_TABLE=1] engines/server/bench/persist.sh [qbench-binary]
# Prints a Markdown table on stdout: the median of ROUNDS runs per cell, servers alternating.
set -euo pipefail
QBENCH=${1:-$(mktemp -d)/qbench}
if [ ! -x "$QBENCH" ]; then go build -o "$QBENCH" ./cmd/qbench; fi
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT_Q=17401 PORT_R=17402
TEST=${TEST:-lpush}

start_q() { # mode
  local dir=$WORK/q-$1; rm -rf "$dir"; mkdir -p "$dir"
  if [ "$1" = none ]; then "$QBENCH" serve --port $PORT_Q --dir "$dir" >/dev/null 2>&1 &
  else "$QBENCH" serve --port $PORT_Q --dir "$dir" --appendonly yes --appendfsync "$1" >/dev/null 2>&1 & fi
  PID=$!
  until redis-cli -p $PORT_Q ping >/dev/null 2>&1; do sleep 0.05; done
}
start_r() {
  local dir=$WORK/r-$1; rm -rf "$dir"; mkdir -p "$dir"
  if [ "$1" = none ]; then redis-server --bind 127.0.0.1 --port $PORT_R --dir "$dir" --save "" --appendonly no >/dev/null 2>&1 &
  else redis-server --bind 127.0.0.1 --port $PORT_R --dir "$dir" --save "" --appendonly yes --appendfsync "$1" >/dev/null 2>&1 & fi
  PID=$!
  until redis-cli -p $PORT_R ping >/dev/null 2>&1; do sleep 0.05; done
}
stop() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
bench() { # port clients requests -> "rps p50 p99"
  redis-benchmark -p "$1" -t "$TEST" -c "$2" -n "$3" --csv 2>/dev/null | tail -1 | tr -d '"' |
    awk -F, '{printf "%d %.3f %.3f", $2, $5, $7}'
}
info() { redis-cli -p "$1" info persistence | tr -d '\r' | awk -F: -v k="$2" '$1==k{print $2}'; }

ROUNDS=${ROUNDS:-3}
if [ -z "${SKIP_TABLE:-}" ]; then
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
echo "| appendfsync | clients | qbench ops/s | qbench p50 ms | qbench p99 ms | writes/fsync | redis ops/s | redis p50 ms | redis p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|"
for mode in none no everysec always; do
  for c in 1 10 50; do
    n=50000; [ "$c" = 1 ] && n=10000; [ "$mode" = always ] && [ "$c" = 1 ] && n=5000
    : >"$WORK/q" ; : >"$WORK/r"; : >"$WORK/w"
    for round in $(seq "$ROUNDS"); do # alternate the servers so drift hits both alike
      start_q $mode; bench $PORT_Q $c $n >>"$WORK/q"; echo >>"$WORK/q"
      [ "$mode" = always ] && info $PORT_Q aof_writes_per_fsync >>"$WORK/w"; stop $PORT_Q
      start_r $mode; bench $PORT_R $c $n >>"$WORK/r"; echo >>"$WORK/r"; stop $PORT_R
    done
    col() { awk -v i="$2" '{print $i}' "$1" | median; }
    wpf=-; [ -s "$WORK/w" ] && wpf=$(median <"$WORK/w")
    echo "| $mode | $c | $(col $WORK/q 1) | $(col $WORK/q 2) | $(col $WORK/q 3) | $wpf | $(col $WORK/r 1) | $(col $WORK/r 2) | $(col $WORK/r 3) |"
  done
done

fi

# Replay speed: a log of N XADDs (appendfsync no, pipelined), loaded at restart; then the same
# data as a base file after BGREWRITEAOF.
N=${REPLAY_N:-1000000}
dir=$WORK/replay; mkdir -p "$dir"
"$QBENCH" serve --port $PORT_Q --dir "$dir" --appendonly yes --appendfsync no >/dev/null 2>&1 &
PID=$!
until redis-cli -p $PORT_Q ping >/dev/null 2>&1; do sleep 0.05; done
redis-benchmark -p $PORT_Q -n "$N" -P 64 -c 4 XADD s '*' field value-with-some-bytes >/dev/null 2>&1
redis-cli -p $PORT_Q set sentinel 1 >/dev/null
stop $PORT_Q
"$QBENCH" serve --port $PORT_Q --dir "$dir" --appendonly yes --appendfsync no >/dev/null 2>&1 &
PID=$!
until redis-cli -p $PORT_Q ping >/dev/null 2>&1; do sleep 0.05; done
recs=$(info $PORT_Q loaded_records); ms=$(info $PORT_Q load_time_ms); size=$(du -b "$dir"/appendonlydir/*.incr.qaof | awk '{print $1}')
echo
echo "replay of the log: $recs records ($size bytes) in $ms ms = $(( recs * 1000 / (ms > 0 ? ms : 1) )) records/s"
redis-cli -p $PORT_Q bgrewriteaof >/dev/null
while [ "$(info $PORT_Q aof_rewrite_in_progress)" = 1 ]; do sleep 0.1; done
echo "BGREWRITEAOF of $N entries paused the server for $(info $PORT_Q latest_snapshot_pause_usec) us (serialisation under the store lock)"
stop $PORT_Q
"$QBENCH" serve --port $PORT_Q --dir "$dir" --appendonly yes --appendfsync no >/dev/null 2>&1 &
PID=$!
until redis-cli -p $PORT_Q ping >/dev/null 2>&1; do sleep 0.05; done
ms=$(info $PORT_Q load_time_ms); len=$(redis-cli -p $PORT_Q xlen s)
echo "load of the rewritten base: $len stream entries in $ms ms = $(( len * 1000 / (ms > 0 ? ms : 1) )) entries/s"
stop $PORT_Q
