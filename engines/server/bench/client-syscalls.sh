#!/usr/bin/env bash
# redis-benchmark's own system calls per request against the in-repo server and redis-server
# (counts only: strace -c -f slows the client, so its rate here means nothing). Tests whether
# the client works harder per request against one server than the other (more epoll_wait
# wake-ups with fewer replies each, short reads). Servers alternate round by round, each fresh.
#   cells: XADD, LPUSH with -c 50 -d 256 unpipelined.
# Usage: [ROUNDS=2] [N=20000] [CELLS="xadd lpush"] engines/server/bench/client-syscalls.sh [qbench-binary]
# Run from the repository root (Linux). Needs strace. Prints a Markdown table: calls per request
# of epoll_wait, epoll_ctl, reads, writes and all calls, per server (median of the rounds).
set -euo pipefail
ROUNDS=${ROUNDS:-2} N=${N:-20000} CELLS=${CELLS:-xadd lpush}
command -v strace >/dev/null || { echo "client-syscalls.sh: needs strace" >&2; exit 2; }
. "$(dirname "$0")/servers.sh"

count() { # test -> "epoll_wait epoll_ctl reads writes total" per request (hiredis: recvfrom, sendto)
  local t=(-t "$1"); [ "$1" = xadd ] && t=(XADD qb:s '*' payload "$VALUE")
  strace -c -f -o "$WORK/strace" redis-benchmark -p "$PORT" -c 50 -P 1 -n "$N" -d 256 -q "${t[@]}" >/dev/null 2>&1
  awk -v n="$N" '$NF == "epoll_wait" {e = $4} $NF == "epoll_ctl" {c = $4} $NF ~ /^(read|recvfrom)$/ {r += $4}
    $NF ~ /^(write|sendto)$/ {w += $4} $NF == "total" {s = $4}
    END { printf "%.3f %.3f %.3f %.3f %.3f\n", e / n, c / n, r / n, w / n, s / n }' "$WORK/strace"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); N=$N per round"
echo
echo "| cell | server | epoll_wait/req | epoll_ctl/req | read+recvfrom/req | write+sendto/req | all calls/req |"
echo "|---|---|---|---|---|---|---|"
for c in $CELLS; do
  q=() r=()
  for _ in $(seq "$ROUNDS"); do
    start q none; q+=("$(count "$c")"); stop
    start r none; r+=("$(count "$c")"); stop
  done
  for s in q r; do
    declare -n rows=$s
    printf '| %s -c 50 -P 1 | %s |' "$c" "$([ $s = q ] && echo qbench || echo redis)"
    for f in 1 2 3 4 5; do printf ' %s |' "$(med $(printf '%s\n' "${rows[@]}" | cut -d' ' -f$f))"; done
    echo
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
