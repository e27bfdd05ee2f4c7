#!/usr/bin/env bash
# Memory figures of issue 35's cases, the in-repo server and redis-server side by side: for each
# case (memfig/main.go, `go run ./engines/server/bench/memfig -list`) a fresh server of each kind
# on a free loopback port (servers.sh: no AOF, --save ""), the case run against it, the server
# stopped by its PID. Prints a Markdown table, one row per case: the server's peak RSS during the
# case's operation (VmHWM, reset once the data is loaded), ours/Redis, and the case's other figure
# for each server. ROUNDS=n repeats every case (one row per round); CASES="a b" picks cases.
# Usage: [ROUNDS=1] [CASES=...] engines/server/bench/memfig.sh [qbench-binary]
# Run from the repository root (Linux: /proc; clear_refs needs the servers' owner or root).
# Public tools only: go, redis-server, redis-cli.
set -euo pipefail
ROUNDS=${ROUNDS:-1}
. "$(dirname "$0")/servers.sh"
go build -o "$WORK/memfig" ./engines/server/bench/memfig
CASES=${CASES:-$("$WORK/memfig" -list | cut -f1 | tr '\n' ' ')}
run() { # server(q|r) case -> "peakMB also..."
  start "$1" none
  local out rc=0
  out=$("$WORK/memfig" -addr "127.0.0.1:$PORT" -pid "$PID" -case "$2") || rc=$?
  stop
  [ "$rc" = 0 ] || { echo "memfig $2 against $1 failed (exit $rc)" >&2; exit 1; }
  echo "$out"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; redis $(redis-server --version | awk '{print $3}')"
echo
echo "| case | round | qbench peak RSS MB | redis peak RSS MB | ours/redis | qbench also | redis also |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for c in $CASES; do
    q=$(run q "$c") r=$(run r "$c")
    qp=${q%% *} rp=${r%% *}
    ratio=$(awk -v a="$qp" -v b="$rp" 'BEGIN{printf "%.2f", a / b}')
    echo "| $c | $round | $qp | $rp | $ratio | ${q#* } | ${r#* } |"
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
