# Sourced by cpu-per-req.sh and vs-redis.sh (not run alone): a work directory removed at exit,
# the qbench binary ($1, or built there), and one server at a time, the in-repo server or
# redis-server, on a free loopback port, stopped by its PID.
WORK=$(mktemp -d)
QBENCH=${1:-$WORK/qbench}
if [ ! -x "$QBENCH" ]; then go build -o "$QBENCH" ./cmd/qbench; fi
PID=
cleanup() { [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
TCK=$(getconf CLK_TCK)
VALUE=$(head -c 256 /dev/zero | tr '\0' v)
SPIN=() CPIN=() # taskset prefixes for the servers and redis-benchmark (PIN="S C": server CPU, client CPU)
if [ -n "${PIN:-}" ]; then read -r pin_s pin_c <<<"$PIN"; SPIN=(taskset -c "$pin_s") CPIN=(taskset -c "$pin_c"); fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # server(q|r) fsync(none|always) -> sets PID and PORT
  PORT=$(free_port)
  local dir=$WORK/$1-$2-$PORT; mkdir -p "$dir"
  local aof=(--appendonly no); [ "$2" = always ] && aof=(--appendonly yes --appendfsync always)
  if [ "$1" = q ]; then "${SPIN[@]}" "$QBENCH" serve --port "$PORT" --dir "$dir" --save "" "${aof[@]}" >/dev/null 2>&1 &
  else "${SPIN[@]}" redis-server --bind 127.0.0.1 --port "$PORT" --dir "$dir" --save "" "${aof[@]}" >/dev/null 2>&1 & fi
  PID=$!
  until redis-cli -p "$PORT" ping >/dev/null 2>&1; do sleep 0.05; done
}
stop() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; } # the server's utime+stime, all threads
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
