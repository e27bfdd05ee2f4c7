#!/usr/bin/env bash
# System calls and context switches per request of the in-repo server and of redis-server under
# --appendonly yes --appendfsync always (redis-benchmark LPUSH -d 256, 1 and 50 clients), from
# perf's syscall tracepoints on the server process. Counts, unlike times, do not swing with what
# else runs on the machine: they show what the scheduler does around each fdatasync (nanosleep
# and futex are the Go runtime's threads waking; Redis has none).
# Usage: [N=3000] engines/server/bench/syscalls-per-req.sh [qbench-binary]
# Run from the repository root; needs perf with access to tracepoints (root or
# kernel.perf_event_paranoid <= -1).
set -euo pipefail
N=${N:-3000}
WORK=$(mktemp -d)
QBENCH=${1:-$WORK/qbench}
if [ ! -x "$QBENCH" ]; then go build -o "$QBENCH" ./cmd/qbench; fi
PID= SP=
cleanup() {
  [ -n "$SP" ] && kill -INT "$SP" 2>/dev/null
  [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null
  wait 2>/dev/null || true; rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
EVENTS=syscalls:sys_enter_fdatasync,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_nanosleep,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield,context-switches,task-clock
run() { # server(q|r) clients requests -> one table row
  local port dir; port=$(free_port); dir=$WORK/$1-$port; mkdir -p "$dir"
  local aof=(--appendonly yes --appendfsync always)
  if [ "$1" = q ]; then "$QBENCH" serve --port "$port" --dir "$dir" "${aof[@]}" >/dev/null 2>&1 &
  else redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save "" "${aof[@]}" >/dev/null 2>&1 & fi
  PID=$!
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
  perf stat -x, -p "$PID" -e "$EVENTS" -o "$dir/stat" &
  SP=$!
  sleep 0.3
  redis-benchmark -p "$port" -c "$2" -n "$3" -d 256 -t lpush -q >/dev/null 2>&1
  kill -INT "$SP"; wait "$SP" 2>/dev/null || true; SP=
  kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=
  awk -F, -v n="$3" -v label="$([ "$1" = q ] && echo qbench || echo redis) -c $2" '
    /^[0-9]/ { v[$3] = $1 }
    END {
      printf "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f |\n", label,
        v["syscalls:sys_enter_fdatasync"] / n, v["syscalls:sys_enter_epoll_wait"] / n,
        v["syscalls:sys_enter_nanosleep"] / n, v["syscalls:sys_enter_futex"] / n,
        v["syscalls:sys_enter_sched_yield"] / n, v["context-switches"] / n, v["task-clock"] * 1000 / n
    }' "$dir/stat"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| server, clients | fdatasync | epoll_wait | nanosleep | futex | sched_yield | context switches | CPU us |"
echo "|---|---|---|---|---|---|---|---|"
for c in 1 50; do
  n=$N; [ "$c" = 50 ] && n=$((N * 10))
  run q "$c" "$n"
  run r "$c" "$n"
done
echo
echo "(per request; CPU is perf's task-clock, which swings with the machine's load)"
