#!/usr/bin/env bash
# The in-repo server against redis-server, as a new user would compare them: redis-benchmark
# rounds that alternate the two servers (so drift on a shared machine hits both alike), then
# memory for 1 M stream entries, 1 M pending entries and a 1 M-element list.
#   cells: XADD, LPUSH, RPOP with -c 50 -d 256, unpipelined and -P 16 (no persistence);
#          LPUSH -d 256 with --appendonly yes --appendfsync always, 1 and 50 clients.
# Prints a Markdown table: requests/s per server (median of the rounds) and ours/Redis as
# median (min-max over rounds), with the load average before and after.
# Usage: [ROUNDS=3] [N=100000] [SKIP_MEM=1] [SKIP_ALWAYS=1] engines/server/bench/vs-redis.sh [qbench-binary]
# Run from the repository root. Public tools only: go, redis-server, redis-benchmark, redis-cli.
set -euo pipefail
ROUNDS=${ROUNDS:-3} N=${N:-100000}
WORK=$(mktemp -d)
QBENCH=${1:-$WORK/qbench}
if [ ! -x "$QBENCH" ]; then go build -o "$QBENCH" ./cmd/qbench; fi
PID=
cleanup() { [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() { # server(q|r) fsync(none|always) -> sets PID and PORT
  PORT=$(free_port)
  local dir=$WORK/$1-$2-$PORT; mkdir -p "$dir"
  local aof=(--appendonly no); [ "$2" = always ] && aof=(--appendonly yes --appendfsync always)
  if [ "$1" = q ]; then "$QBENCH" serve --port "$PORT" --dir "$dir" "${aof[@]}" >/dev/null 2>&1 &
  else redis-server --bind 127.0.0.1 --port "$PORT" --dir "$dir" --save "" "${aof[@]}" >/dev/null 2>&1 & fi
  PID=$!
  until redis-cli -p "$PORT" ping >/dev/null 2>&1; do sleep 0.05; done
}
stop() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }
VALUE=$(head -c 256 /dev/zero | tr '\0' v)
rps() { # port test clients pipeline requests (redis-benchmark 7.0 has no xadd test: a custom command)
  local t=(-t "$2"); [ "$2" = xadd ] && t=(XADD qb:s '*' payload "$VALUE")
  # RPOP pops what an untimed LPUSH round pushed, as in -t lpush,rpop (not nil from an empty list).
  [ "$2" = rpop ] && redis-benchmark -p "$1" -c "$3" -P 16 -n "$5" -d 256 -t lpush -q >/dev/null 2>&1
  redis-benchmark -p "$1" -c "$3" -P "$4" -n "$5" -d 256 --csv "${t[@]}" 2>/dev/null | tail -1 | tr -d '"' | cut -d, -f2
}
fsyncs() { redis-cli -p "$1" info persistence | tr -d '\r' | awk -F: '$1=="aof_writes_per_fsync"{print $2}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; redis $(redis-server --version | awk '{print $3}')"
echo
echo "| cell | qbench req/s | redis req/s | ours/redis median (min-max) |"
echo "|---|---|---|---|"
cell() { # label test clients pipeline fsync requests
  local q=() r=() ratios=()
  for _ in $(seq "$ROUNDS"); do
    start q "$5"; local a; a=$(rps "$PORT" "$2" "$3" "$4" "$6"); stop
    start r "$5"; local b; b=$(rps "$PORT" "$2" "$3" "$4" "$6"); stop
    q+=("$a"); r+=("$b"); ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a/b}')")
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
  local lo hi; lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1); hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
  printf '| %s | %.0f | %.0f | %s (%s-%s) |\n' "$1" "$(med "${q[@]}")" "$(med "${r[@]}")" "$(med "${ratios[@]}")" "$lo" "$hi"
}
for t in xadd lpush rpop; do
  for p in 1 16; do cell "$t -c 50 -P $p" "$t" 50 "$p" none "$N"; done
done
if [ -z "${SKIP_ALWAYS:-}" ]; then
  cell "lpush always -c 1" lpush 1 1 always $((N / 20))
  cell "lpush always -c 50" lpush 50 1 always $((N / 2))
  # How many writes one fdatasync covers at 50 clients (Redis: one per event-loop turn).
  start q always; rps "$PORT" lpush 50 1 $((N / 2)) >/dev/null; echo; echo "qbench appendfsync always, 50 clients: $(fsyncs "$PORT") writes per fsync"; stop
fi
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "${SKIP_MEM:-}" ]; then
  echo
  echo "memory (RSS growth of a child server and of redis-server for the same load):"
  go test -run '^$' -bench MemoryVsRedis -benchtime 1x ./engines/server | grep 'RSS +' | sed 's/^ *memory_bench_test.go:[0-9]*: /  /'
fi
