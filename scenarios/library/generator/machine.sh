# The machine's state over a benchmark round, for the benchmark scripts to source, so that a
# quoted figure carries it (figures from a busy or shared machine are off by up to 1.5x):
#   . scenarios/library/generator/machine.sh
#   machine_mark                 # before the round, in the script's own shell (not in $(...))
#   ...the round...
#   machine_line "round 1"       # after it: one line on stdout, and MACHINE_STEAL (% of the
#                                # machine's CPU), MACHINE_OTHER (cores), MACHINE_LOAD set
# steal is the hypervisor's (/proc/stat); other processes' CPU is the machine's busy time (user +
# nice + system + irq + softirq) minus that of this script and every process under it (live ones'
# utime + stime + cutime + cstime: servers the script started, and everything waited for, qbench
# and the children it reaped included). Linux only: elsewhere the line says "unknown".
#
# Idle CPUs: sourcing this file with IDLE=poll (the default) holds a CPU latency limit of 0 on
# /dev/cpu_dma_latency for as long as the script runs, when it may (root): the kernel's idle
# governor then polls instead of halting, on every CPU, for every process (what cyclictest does).
# On a VM whose idle vCPUs halt, each wake-up of a halted vCPU waits for the host and is counted
# as steal: on this project's 2-core Firecracker VM 11-24% steal at load 1, under 1.5% with the
# hold (bench/machineidle.go). The kernel drops the limit when the script's shell exits, however
# it ends. IDLE=halt leaves the machine as it is. Each machine line says which it was.

# machine_cpu prints the busy, steal and total ticks of /proc/stat's cpu line.
machine_cpu() {
	awk '$1 == "cpu" { b = $2 + $3 + $4 + $7 + $8; print b, $9 + 0, b + $5 + $6 + $9; exit }' /proc/stat
}

# machine_tree prints the CPU ticks of the process $1 and every live process under it.
machine_tree() {
	# (a process may exit between the glob and the read: cat then fails, which must not end a
	# caller running under set -e -o pipefail)
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$1" '
		{ pid = $1; sub(/^.*\) /, ""); ppid[pid] = $2; t[pid] = $12 + $13 + $14 + $15 }
		END {
			in_tree[root] = 1; n = 1
			while (n > 0) { n = 0; for (p in ppid) if (!(p in in_tree) && (ppid[p] in in_tree)) { in_tree[p] = 1; n++ } }
			for (p in in_tree) s += t[p]; print s + 0
		}'
}

MACHINE_IDLE=
if [ "${IDLE:-poll}" = poll ] && [ -w /dev/cpu_dma_latency ] && exec 19>/dev/cpu_dma_latency 2>/dev/null; then
	# "0" is parsed as hexadecimal: 0 us. Held until this shell (and every child that inherited
	# descriptor 19) has exited.
	printf 0 >&19 && MACHINE_IDLE="; idle CPUs polled (held by this script: IDLE=poll)"
elif [ "${IDLE:-poll}" = poll ]; then
	echo "machine.sh: IDLE=poll: /dev/cpu_dma_latency is not writable here (needs root): idle CPUs are left as they are" >&2
fi
if [ -z "$MACHINE_IDLE" ] && [ -r /sys/devices/system/cpu/cpuidle/current_driver ]; then
	MACHINE_IDLE="; idle CPUs may halt (cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver))"
fi

machine_mark() {
	MACHINE_LOAD=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)
	if [ -r /proc/stat ]; then
		MACHINE_CPU0=$(machine_cpu)
		MACHINE_TREE0=$(machine_tree $$)
		MACHINE_T0=$(date +%s%N)
	else
		MACHINE_CPU0=
	fi
}

machine_line() {
	if [ -z "${MACHINE_CPU0:-}" ]; then
		MACHINE_STEAL=unknown MACHINE_OTHER=unknown
		echo "$1 machine: load average ${MACHINE_LOAD:-unknown}; steal and other processes unknown (no /proc/stat)"
		return
	fi
	local cpu1 tree1 t1 out
	cpu1=$(machine_cpu) tree1=$(machine_tree $$) t1=$(date +%s%N)
	out=$(awk -v a="$MACHINE_CPU0" -v b="$cpu1" -v tr0="$MACHINE_TREE0" -v tr1="$tree1" -v w=$((t1 - MACHINE_T0)) '
		BEGIN {
			split(a, x, " "); split(b, y, " ")
			busy = y[1] - x[1]; steal = y[2] - x[2]; total = y[3] - x[3]
			other = busy - (tr1 - tr0); if (other < 0) other = 0
			if (total <= 0 || w <= 0) { print "0 0 0"; exit }
			# ticks are USER_HZ (100 on Linux); w in ns
			printf "%.1f %.2f %.0f\n", 100 * steal / total, other / 100 / (w / 1e9), 100 * other / total
		}')
	read -r MACHINE_STEAL MACHINE_OTHER MACHINE_OTHER_PCT <<<"$out"
	echo "$1 machine: load average $MACHINE_LOAD at the start; steal ${MACHINE_STEAL}% of the CPU; other processes ${MACHINE_OTHER} cores (${MACHINE_OTHER_PCT}% of the machine's CPU)$MACHINE_IDLE"
}
