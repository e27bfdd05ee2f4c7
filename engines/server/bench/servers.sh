# Sourced by cpu-per-req.sh and vs-redis.sh (not run alone): a work directory removed at exit,
# the qbench binary ($1, or built there), and one server at a time, the in-repo server or
# redis-server, on a free loopback port, stopped by its PID. QUOTA=C (cores, e.g. 0.5) starts each
# server in a fresh cgroup capped at C cores (CFS quota: cgroup v1 cpu.cfs_quota_us, or v2 cpu.max;
# root only), removed when the server stops.
WORK=$(mktemp -d)
QBENCH=${1:-$WORK/qbench}
if [ ! -x "$QBENCH" ]; then go build -o "$QBENCH" ./cmd/qbench; fi
PID= CG=
cg_remove() { if [ -n "$CG" ]; then rmdir "$CG" 2>/dev/null || echo "could not remove cgroup $CG" >&2; CG=; fi; }
cleanup() { [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null; wait 2>/dev/null || true; cg_remove; rm -rf "$WORK"; }
trap cleanup EXIT
TCK=$(getconf CLK_TCK)
VALUE=$(head -c 256 /dev/zero | tr '\0' v)
SPIN=() CPIN=() # taskset prefixes for the servers and redis-benchmark (PIN="S C": server CPU, client CPU)
if [ -n "${PIN:-}" ]; then read -r pin_s pin_c <<<"$PIN"; SPIN=(taskset -c "$pin_s") CPIN=(taskset -c "$pin_c"); fi

CG_ROOT= CG_V=
if [ -n "${QUOTA:-}" ]; then
  if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then CG_ROOT=/sys/fs/cgroup/cpu CG_V=1
  elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then CG_ROOT=/sys/fs/cgroup CG_V=2
  else echo "QUOTA: no cgroup cpu controller (v1 /sys/fs/cgroup/cpu, v2 /sys/fs/cgroup/cpu.max)" >&2; exit 2; fi
  awk -v q="$QUOTA" 'BEGIN{exit !(q > 0 && q <= 64)}' || { echo "QUOTA: want cores > 0, got $QUOTA" >&2; exit 2; }
  [ -w "$CG_ROOT" ] || { echo "QUOTA: $CG_ROOT is not writable (run as root)" >&2; exit 2; }
fi
cg_make() { # name -> CG: a new cgroup capped at QUOTA cores (period 100 ms)
  CG=$CG_ROOT/qbench-quota-$$-$1
  mkdir "$CG"
  local us; us=$(awk -v q="$QUOTA" 'BEGIN{printf "%d", q * 100000}')
  if [ "$CG_V" = 1 ]; then echo 100000 >"$CG/cpu.cfs_period_us"; echo "$us" >"$CG/cpu.cfs_quota_us"
  else grep -qw cpu "$CG_ROOT/cgroup.subtree_control" || echo +cpu >"$CG_ROOT/cgroup.subtree_control"
       echo "$us 100000" >"$CG/cpu.max"; fi
}
throttle() { if [ -n "$CG" ]; then awk '$1=="nr_periods"{p=$2} $1=="nr_throttled"{t=$2} END{print p+0, t+0}' "$CG/cpu.stat"; else echo 0 0; fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # server(q|r) fsync(none|always) -> sets PID and PORT
  PORT=$(free_port)
  local dir=$WORK/$1-$2-$PORT; mkdir -p "$dir"
  local aof=(--appendonly no); [ "$2" = always ] && aof=(--appendonly yes --appendfsync always)
  # Under QUOTA the server is born in its cgroup (cgroup.procs: every thread it ever starts).
  local cgrun=()
  if [ -n "$CG_ROOT" ]; then cg_make "$1-$PORT"; cgrun=(bash -c 'echo $$ >"$0" && exec "$@"' "$CG/cgroup.procs"); fi
  if [ "$1" = q ]; then "${SPIN[@]}" "${cgrun[@]}" "$QBENCH" serve --port "$PORT" --dir "$dir" --save "" "${aof[@]}" >/dev/null 2>&1 &
  else "${SPIN[@]}" "${cgrun[@]}" redis-server --bind 127.0.0.1 --port "$PORT" --dir "$dir" --save "" "${aof[@]}" >/dev/null 2>&1 & fi
  PID=$!
  until redis-cli -p "$PORT" ping >/dev/null 2>&1; do sleep 0.05; done
}
stop() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; cg_remove; }
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; } # the server's utime+stime, all threads
# the server's voluntary and involuntary context switches, summed over its live threads
csw() { { cat /proc/"$PID"/task/*/status 2>/dev/null || true; } | awk '$1=="voluntary_ctxt_switches:"{v+=$2} $1=="nonvoluntary_ctxt_switches:"{i+=$2} END{print v+0, i+0}'; }
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
