#!/usr/bin/env bash
# CPU per request of the in-repo server and of redis-server, cell by cell: each server's
# user+system CPU (from /proc/PID/stat) while redis-benchmark sends a fixed number of requests,
# divided by that number. On a shared machine this is steadier than requests/s, which swing with
# whatever else runs (single-threaded Redis more than us).
#   cells: XADD, LPUSH, RPOP with -c 50 -d 256, unpipelined and -P 16 (no persistence);
#          LPUSH -d 256 under --appendonly yes --appendfsync always with 1 and 50 clients.
# Usage: [ROUNDS=3] [N=100000] [SKIP_ALWAYS=1 | ONLY_ALWAYS=1] engines/server/bench/cpu-per-req.sh [qbench-binary]
# Run from the repository root (Linux: /proc). Prints a Markdown table of the medians.
set -euo pipefail
ROUNDS=${ROUNDS:-3} N=${N:-100000}
. "$(dirname "$0")/servers.sh"

cpu() { # test clients pipeline requests -> microseconds of CPU per request
  local t=(-t "$1"); [ "$1" = xadd ] && t=(XADD qb:s '*' payload "$VALUE")
  [ "$1" = rpop ] && redis-benchmark -p "$PORT" -c "$2" -P 16 -n "$4" -d 256 -t lpush -q >/dev/null 2>&1
  local t0 t1; t0=$(ticks)
  redis-benchmark -p "$PORT" -c "$2" -P "$3" -n "$4" -d 256 -q "${t[@]}" >/dev/null 2>&1
  t1=$(ticks)
  awk -v d=$((t1 - t0)) -v n="$4" -v tck="$TCK" 'BEGIN{printf "%.2f", d / tck / n * 1e6}'
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo
echo "| cell | qbench CPU us/req | redis CPU us/req | ours/redis (lower is better) |"
echo "|---|---|---|---|"
cell() { # label test clients pipeline fsync requests
  local q=() r=()
  for _ in $(seq "$ROUNDS"); do
    start q "$5"; q+=("$(cpu "$2" "$3" "$4" "$6")"); stop
    start r "$5"; r+=("$(cpu "$2" "$3" "$4" "$6")"); stop
  done
  local a b; a=$(med "${q[@]}"); b=$(med "${r[@]}")
  printf '| %s | %s | %s | %s |\n' "$1" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a/b}')"
}
if [ -z "${ONLY_ALWAYS:-}" ]; then
  for t in xadd lpush rpop; do
    for p in 1 16; do cell "$t -c 50 -P $p" "$t" 50 "$p" none "$N"; done
  done
fi
if [ -z "${SKIP_ALWAYS:-}" ]; then
  cell "lpush always -c 1" lpush 1 1 always $((N / 20))
  cell "lpush always -c 50" lpush 50 1 always $((N / 2))
fi
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
