#!/usr/bin/env bash
# The in-repo server against redis-server, as a new user would compare them: redis-benchmark
# rounds that alternate the two servers (so drift on a shared machine hits both alike), then
# memory for 1 M stream entries, 1 M pending entries and a 1 M-element list.
#   cells: XADD, LPUSH, RPOP with -c 50 -d 256, unpipelined and -P 16 (no persistence);
#          LPUSH -d 256 with --appendonly yes --appendfsync always, 1 and 50 clients.
# Prints a Markdown table: requests/s per server (median of the rounds) and ours/Redis as
# median (min-max over rounds), with the load average before and after. Beside them, per round:
# the server's CPU per request (utime+stime from /proc/PID/stat around the timed redis-benchmark,
# divided by the requests; ours/Redis as median (min-max)), redis-benchmark's own CPU as a share
# of its wall time (from /usr/bin/time), and which side was saturated: "client" when
# redis-benchmark (single-threaded) used >= 90% of a core, "server" when the server did (Redis's
# main thread; ours may use more than one core), else "-". A cell whose client is saturated
# measures redis-benchmark, not the server: its req/s ratio sits at 1.0 +- noise, and CPU per
# request is the figure that still compares the servers. /proc ticks are 10 ms: at -P 16 with
# N=100000 a round lasts ~0.1 s, so raise N there for CPU figures finer than ~10%.
# The last column is the round with the most steal and other processes' CPU (scenarios/library/generator/
# machine.sh; each round's line goes to stderr): a cell measured beside other work says so.
# THREADS2=1 adds the unpipelined cells again with redis-benchmark --threads 2, only to show
# what bounds them (a client no longer saturated); they are not headline cells.
# After the table, one row per round and cell: both servers' req/s, the ratio, CPU per request,
# client/server CPU %, and what else the machine did meanwhile ("other": CPU of every process but
# the server and redis-benchmark, % of one core, from /proc/stat; "steal": the hypervisor's) and
# "slow": the side whose req/s fell under 0.6 of its own median in that cell. A round where one
# side collapses while "other" or "steal" jumps is the machine, not that server (10 ms ticks:
# meaningless for rounds much under a second, e.g. -P 16 at small N).
# Fairness: each round starts a fresh server (an empty keyspace, so every XADD round builds the
# same 0..N-entry stream), both with no AOF and no snapshots (--save ""), neither pinned to a CPU,
# both answering one PING before the timed run; the servers alternate round by round.
# PIN="S C" pins each server to CPU S and redis-benchmark to CPU C (taskset; default: no pinning,
# the scheduler places them). Placement moves unpipelined cells more than either server does:
# on this 2-vCPU VM, XADD with server and client pinned to different vCPUs cost both servers
# 1.3-1.5x the CPU per request of the same vCPU (cross-CPU wake-ups), and unpinned rounds land on
# either; PIN="0 1" and PIN="0 0" give each layout on its own (ours then runs on one CPU too).
# CELLS="xadd" / PIPES="1" restrict the headline cells (default "xadd lpush rpop" and "1 16"),
# e.g. CELLS=xadd PIPES=1 ROUNDS=20 SKIP_ALWAYS=1 SKIP_MEM=1 for many XADD rounds.
# QUOTA=C caps each server at C cores (a fresh CFS-quota cgroup per run, servers.sh; root): the
# unpipelined cells are then server-bound, req/s = quota / server CPU per request, so their ratio
# compares the servers; "server CPU %" (~= 100 C) and "throttled %" (share of 100 ms CFS periods
# in which the cap was hit) check the cap holds. Under QUOTA, "saturated: server" = 90% of the cap.
# qbench takes GOMAXPROCS from the environment (Go 1.25+ sees the quota but never goes under 2).
# A second table: redis-benchmark's CPU us and context switches per request, and the servers'
# context switches per request (summed over their threads), per cell and server.
# Usage: [ROUNDS=3] [N=100000] [CELLS=...] [PIPES=...] [PIN="S C"] [QUOTA=cores] [GOMAXPROCS=n] [SKIP_MEM=1] [SKIP_ALWAYS=1] [THREADS2=1] engines/server/bench/vs-redis.sh [qbench-binary]
# Run from the repository root (Linux: /proc). Public tools only: go, redis-server,
# redis-benchmark, redis-cli, /usr/bin/time.
set -euo pipefail
ROUNDS=${ROUNDS:-3} N=${N:-100000} CELLS=${CELLS:-xadd lpush rpop} PIPES=${PIPES:-1 16}
. "$(dirname "$0")/servers.sh"
. "$(dirname "$0")/../../../scenarios/library/generator/machine.sh"
RB_EXTRA=() # extra redis-benchmark options for the timed run (THREADS2)
now() { date +%s%N; }
# The machine's busy and stolen ticks (all CPUs) from /proc/stat.
machine() { awk '$1=="cpu"{print $2+$3+$4+$7+$8, $9}' /proc/stat; }
# port test clients pipeline requests -> "req/s server-us/req client-cpu% server-cpu% other% steal%
#   client-us/req client-vcs/req client-ics/req server-vcs/req server-ics/req throttled%"
# (cs: voluntary and involuntary context switches; throttled: % of the CFS periods under QUOTA in
# which the server's cgroup was throttled; redis-benchmark 7.0 has no xadd test: a custom command)
rps() {
  local t=(-t "$2"); [ "$2" = xadd ] && t=(XADD qb:s '*' payload "$VALUE")
  # RPOP pops what an untimed LPUSH round pushed, as in -t lpush,rpop (not nil from an empty list).
  [ "$2" = rpop ] && "${CPIN[@]}" redis-benchmark -p "$1" -c "$3" -P 16 -n "$5" -d 256 -t lpush -q >/dev/null 2>&1
  local k0 k1 w0 w1 r m0 m1 c0 c1 t0 t1
  m0=($(machine)); c0=($(csw)); t0=($(throttle)); k0=$(ticks); w0=$(now)
  r=$(/usr/bin/time -f '%U %S %w %c' -o "$WORK/time" "${CPIN[@]}" redis-benchmark -p "$1" -c "$3" -P "$4" -n "$5" -d 256 --csv "${RB_EXTRA[@]}" "${t[@]}" 2>/dev/null | tail -1 | tr -d '"' | cut -d, -f2)
  w1=$(now); k1=$(ticks); t1=($(throttle)); c1=($(csw)); m1=($(machine))
  awk -v r="$r" -v k=$((k1 - k0)) -v tck="$TCK" -v n="$5" -v w=$((w1 - w0)) -v c="$(tail -1 "$WORK/time")" \
      -v busy=$((m1[0] - m0[0])) -v steal=$((m1[1] - m0[1])) -v sv=$((c1[0] - c0[0])) -v si=$((c1[1] - c0[1])) \
      -v tp=$((t1[0] - t0[0])) -v tt=$((t1[1] - t0[1])) '
    BEGIN { split(c, u, " "); s = w / 1e9; o = (busy / tck - k / tck - u[1] - u[2]) / s * 100
            printf "%s %.2f %.0f %.0f %.0f %.0f %.2f %.3f %.3f %.3f %.3f %.0f\n", r, k / tck / n * 1e6, (u[1] + u[2]) / s * 100, k / tck / s * 100, (o > 0 ? o : 0), steal / tck / s * 100,
              (u[1] + u[2]) / n * 1e6, u[3] / n, u[4] / n, sv / n, si / n, (tp > 0 ? tt / tp * 100 : 0) }'
}
fsyncs() { redis-cli -p "$1" info persistence | tr -d '\r' | awk -F: '$1=="aof_writes_per_fsync"{print $2}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; redis $(redis-server --version | awk '{print $3}'); pinning: ${PIN:-none}; server CPU quota: ${QUOTA:-none}${QUOTA:+ cores (cgroup v$CG_V)}; qbench GOMAXPROCS: ${GOMAXPROCS:-default}"
echo
echo "| cell | qbench req/s | redis req/s | ours/redis median (min-max) | qbench CPU us/req | redis CPU us/req | ours/redis CPU median (min-max) | client CPU % (q/r) | saturated (q/r) | worst round: steal %, other cores |"
echo "|---|---|---|---|---|---|---|---|---|---|"
span() { printf '%s (%s-%s)' "$(med "$@")" "$(printf '%s\n' "$@" | sort -g | head -1)" "$(printf '%s\n' "$@" | sort -g | tail -1)"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (b > 0) printf "%.2f", a/b; else print "inf"}'; }
# client% server% -> which side ran at ~a full core (the client first: it bounds the cell)
# (CLIENT_CORES: the client's threads, each of which can fill a core)
CLIENT_CORES=1
# (under QUOTA the server is saturated at 90% of its quota: "server" means capped)
SRV_CORES=${QUOTA:-1}
saturated() { awk -v c="$1" -v s="$2" -v k="$CLIENT_CORES" -v sk="$SRV_CORES" 'BEGIN{print (c >= 90 * k ? "client" : s >= 90 * sk ? "server" : "-")}'; }
cell() { # label test clients pipeline fsync requests
  local q=() r=() ratios=() qc=() rc=() cratios=() qu=() ru=() qs=() rs=() steal=() other=() a b i rows=() x=() j
  for i in $(seq "$ROUNDS"); do
    machine_mark
    start q "$5"; a=($(rps "$PORT" "$2" "$3" "$4" "$6")); stop
    start r "$5"; b=($(rps "$PORT" "$2" "$3" "$4" "$6")); stop
    for j in 3 6 7 8 9 10 11; do x[j]+=" ${a[j]}"; x[j + 20]+=" ${b[j]}"; done
    q+=("${a[0]}"); r+=("${b[0]}"); ratios+=("$(ratio "${a[0]}" "${b[0]}")")
    qc+=("${a[1]}"); rc+=("${b[1]}"); cratios+=("$(ratio "${a[1]}" "${b[1]}")")
    qu+=("${a[2]}"); ru+=("${b[2]}"); qs+=("$(saturated "${a[2]}" "${a[3]}")"); rs+=("$(saturated "${b[2]}" "${b[3]}")")
    rows+=("$1|$i|${a[0]}|${b[0]}|${ratios[-1]}|${a[1]}|${b[1]}|${a[2]}/${b[2]}|${a[3]}/${b[3]}|${qs[-1]}/${rs[-1]}|${a[4]}/${b[4]}|${a[5]}/${b[5]}|${a[6]}/${b[6]}|${a[7]}/${b[7]}|${a[9]}/${b[9]}|${a[11]}/${b[11]}")
    echo "round $i of $1: ours ${a[0]} req/s, redis ${b[0]} req/s, ratio ${ratios[-1]}" >&2
    machine_line "$1 round $i:" >&2; steal+=("$MACHINE_STEAL"); other+=("$MACHINE_OTHER")
  done
  # Each round against its own side's median: "q" or "r" when under 0.6 of it.
  local mq mr
  mq=$(med "${q[@]}") mr=$(med "${r[@]}")
  for row in "${rows[@]}"; do
    ROWS+=("$(awk -F'|' -v mq="$mq" -v mr="$mr" -v OFS=' | ' '{ slow = ($3 < 0.6 * mq ? "q" : "") ($4 < 0.6 * mr ? "r" : ""); $3 = sprintf("%.0f", $3); $4 = sprintf("%.0f", $4)
      print "| " $0, (slow == "" ? "-" : slow) " |" }' <<<"$row")")
  done
  # The saturated side most rounds agree on (ties: the first round's).
  most() { printf '%s\n' "$@" | sort | uniq -c | sort -k1,1nr -s | head -1 | awk '{print $2}'; }
  printf '| %s | %.0f | %.0f | %s | %s | %s | %s | %s/%s | %s/%s | %s, %s |\n' "$1" "$(med "${q[@]}")" "$(med "${r[@]}")" "$(span "${ratios[@]}")" \
    "$(med "${qc[@]}")" "$(med "${rc[@]}")" "$(span "${cratios[@]}")" "$(med "${qu[@]}")" "$(med "${ru[@]}")" "$(most "${qs[@]}")" "$(most "${rs[@]}")" \
    "$(printf '%s\n' "${steal[@]}" | sort -g | tail -1)" "$(printf '%s\n' "${other[@]}" | sort -g | tail -1)"
  # the client's cost and both sides' context switches per request, medians of the rounds
  # shellcheck disable=SC2086
  CS_ROWS+=("$(printf '| %s | %s/%s | %s/%s | %s/%s | %s/%s | %s/%s | %s/%s | %s/%s |' "$1" \
    "$(med ${x[6]})" "$(med ${x[26]})" "$(med ${x[7]})" "$(med ${x[27]})" "$(med ${x[8]})" "$(med ${x[28]})" \
    "$(med ${x[9]})" "$(med ${x[29]})" "$(med ${x[10]})" "$(med ${x[30]})" "$(med ${x[3]})" "$(med ${x[23]})" "$(med ${x[11]})" "$(med ${x[31]})")")
}
ROWS=() CS_ROWS=()
for t in $CELLS; do
  for p in $PIPES; do cell "$t -c 50 -P $p" "$t" 50 "$p" none "$N"; done
done
if [ -n "${THREADS2:-}" ]; then
  # Client CPU % here is of one core: up to 200 with two threads.
  RB_EXTRA=(--threads 2) CLIENT_CORES=2
  for t in xadd lpush rpop; do cell "$t -c 50 -P 1 --threads 2 (not headline)" "$t" 50 1 none "$N"; done
  RB_EXTRA=() CLIENT_CORES=1
fi
if [ -z "${SKIP_ALWAYS:-}" ]; then
  cell "lpush always -c 1" lpush 1 1 always $((N / 20))
  cell "lpush always -c 50" lpush 50 1 always $((N / 2))
  # How many writes one fdatasync covers at 50 clients (Redis: one per event-loop turn).
  start q always; rps "$PORT" lpush 50 1 $((N / 2)) >/dev/null; echo; echo "qbench appendfsync always, 50 clients: $(fsyncs "$PORT") writes per fsync"; stop
fi
echo
echo "client cost and context switches per request (medians of the rounds, ours/redis; cs: voluntary and involuntary context switches, redis-benchmark's from getrusage via /usr/bin/time, the server's summed over its threads from /proc/PID/task/*/status; throttled: % of CFS periods in which the server's cgroup hit QUOTA):"
echo
echo "| cell | client CPU us/req | client vol. cs/req | client invol. cs/req | server vol. cs/req | server invol. cs/req | server CPU % | throttled % |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${CS_ROWS[@]}"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "per round (other, steal: CPU % of one core used meanwhile by the rest of the machine and by the hypervisor):"
echo
echo "| cell | round | qbench req/s | redis req/s | ours/redis | qbench CPU us/req | redis CPU us/req | client CPU % (q/r) | server CPU % (q/r) | saturated (q/r) | other % (q/r) | steal % (q/r) | client us/req (q/r) | client vol. cs/req (q/r) | server vol. cs/req (q/r) | throttled % (q/r) | slow |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
if [ -z "${SKIP_MEM:-}" ]; then
  echo
  echo "memory (RSS growth of a child server and of redis-server for the same load):"
  go test -run '^$' -bench MemoryVsRedis -benchtime 1x ./engines/server | grep 'RSS +' | sed 's/^ *memory_bench_test.go:[0-9]*: /  /'
fi
