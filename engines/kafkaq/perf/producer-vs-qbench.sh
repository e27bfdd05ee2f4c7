#!/usr/bin/env bash
# Kafka's own producer benchmark against qbench's, on one broker, alternately.
#
# Starts one single-node KRaft broker the way qbench does (engines/procs: same server.properties
# and JVM flags, jars from .ci/kafka-jars.sh), runs one discarded warm-up pair, then ROUNDS
# rounds of
#   A. org.apache.kafka.tools.ProducerPerformance (jars from .ci/kafka-tools-jars.sh) on a fresh
#      topic of PARTITIONS partitions: RECORDS records of 256 B, --throughput -1, acks=ACKS, and
#   B. qbench run SCENARIO (default scenarios/library/kafka/kafka-max-rate.yaml) against the same broker
#      (engine kafka-url, on a fresh topic of its own; QBENCH_ROLE=produce, the default, runs it
#      producer-only as ProducerPerformance is: role: produce on a named topic of PARTITIONS
#      partitions; QBENCH_ROLE=both keeps the scenario's consumer),
# in the order AB BA AB BA ... (so neither side always runs on the broker the other has just
# warmed or filled), and prints per round each side's rate, its CPU per record (the whole client
# process, getrusage of the child: start-up included), the broker's CPU per record over that
# side's run (/proc/PID/stat), and records per Produce request (ProducerPerformance's
# records-per-request-avg; qbench: batched messages / batches from its result's facts). Ends with
# the median and the range of the per-round ratios qbench / ProducerPerformance, once with
# ProducerPerformance's whole-run rate (its JVM's start-up and JIT included, where qbench's rate
# leaves its warmup out) and once with its steady rate (its 5 s progress windows after the first;
# RECORDS must last at least two windows). Client CPU per record includes each process's
# start-up: the JVM's class loading and JIT weigh more the fewer the records. After each round,
# the round's machine state (load average, steal, other processes' CPU: scenarios/library/generator/machine.sh).
#
#   engines/kafkaq/perf/producer-vs-qbench.sh             # from the repository root
#   ROUNDS=6 RECORDS=2000000 engines/kafkaq/perf/producer-vs-qbench.sh scenarios/library/kafka/kafka-max-rate.yaml
#
# Public tools only: bash, java, go (to build qbench), grep, sed, awk, sort. The broker is stopped
# by PID and its directory removed on exit. stdout: one line per round and the summary; stderr:
# progress.
set -euo pipefail

scenario="${1:-scenarios/library/kafka/kafka-max-rate.yaml}"
rounds="${ROUNDS:-4}"
warmup="${WARMUP:-1}"
role="${QBENCH_ROLE:-produce}"
records="${RECORDS:-2000000}"
partitions="${PARTITIONS:-4}"
acks="${ACKS:-all}"

root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "${root}"
broker_home="$(.ci/kafka-jars.sh)"
tools_home="$(.ci/kafka-tools-jars.sh)"

work="$(mktemp -d)"
broker_pid=""
cleanup() {
	if [[ -n "${broker_pid}" ]] && kill -0 "${broker_pid}" 2>/dev/null; then
		kill -TERM "${broker_pid}" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "${broker_pid}" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "${broker_pid}" 2>/dev/null || true
	fi
	rm -rf "${work}"
}
trap cleanup EXIT

echo "building qbench" >&2
go build -o "${work}/qbench" ./cmd/qbench

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port="$(free_port)"
ctrl="$(free_port)"
mkdir -p "${work}/broker/data"
# The same settings as engines/procs (Kafka.properties).
cat >"${work}/broker/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${ctrl}
listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${ctrl}
advertised.listeners=PLAINTEXT://127.0.0.1:${port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=${work}/broker/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
delete.topic.enable=true
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
PROPS
jvm=(-Xms512m -Xmx1g -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
	-XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true)
cluster="$(java -cp "${broker_home}/libs/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)"
java -Xmx256m -cp "${broker_home}/libs/*" kafka.tools.StorageTool format -t "${cluster}" \
	-c "${work}/broker/server.properties" >"${work}/broker/format.log" 2>&1
java "${jvm[@]}" -cp "${broker_home}/libs/*" kafka.Kafka "${work}/broker/server.properties" \
	>"${work}/broker/broker.log" 2>&1 &
broker_pid=$!
bootstrap="127.0.0.1:${port}"
for _ in $(seq 1 600); do
	if (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then break; fi
	kill -0 "${broker_pid}" || { tail -20 "${work}/broker/broker.log" >&2; exit 1; }
	sleep 0.1
done
echo "broker pid ${broker_pid} at ${bootstrap}" >&2

tools() { java -Xmx512m -cp "${tools_home}/libs/*" "$@"; }

# qbench's scenario, pointed at this broker.
sed -e 's/^engine: kafka$/engine: kafka-url/' "${scenario}" >"${work}/scenario.yaml"
echo "address: ${bootstrap}" >>"${work}/scenario.yaml"
grep -q '^engine: kafka-url$' "${work}/scenario.yaml" || { echo "${scenario}: want engine: kafka" >&2; exit 1; }
grep -q "^  partitions: ${partitions}\$" "${work}/scenario.yaml" ||
	{ echo "${scenario}: want kafka: partitions: ${partitions} (PARTITIONS)" >&2; exit 1; }
case "${role}" in
produce) grep -q '^role:' "${work}/scenario.yaml" && { echo "${scenario}: has a role already" >&2; exit 1; }
	echo "role: produce" >>"${work}/scenario.yaml" ;;
both) ;;
*) echo "QBENCH_ROLE: want produce or both (got ${role})" >&2; exit 2 ;;
esac

hz="$(getconf CLK_TCK)"
broker_ticks() { awk '{ print $14 + $15 }' "/proc/${broker_pid}/stat"; }
# child_cpu FILE CMD...: runs CMD (output to FILE.log) and writes its user+sys seconds to FILE.
child_cpu() {
	local f="$1"
	shift
	# times in the subshell itself (not in a pipeline, whose fork has no children): line 2 is
	# the user and system time of the subshell's children, i.e. CMD's.
	("$@" >"${f}.log" 2>&1 || echo "exit $?" >>"${f}.log"
		times >"${f}.times")
	awk 'NR == 2 { n = split($0, t, / /); s = 0
		for (i = 1; i <= n; i++) { split(t[i], ms, /[ms]/); s += ms[1] * 60 + ms[2] } print s }' "${f}.times" >"${f}"
}
per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'; }

# run_pp TAG: prints "rate steady_rate client_cpu_us_per_record broker_cpu_us_per_record
# records_per_request".
run_pp() {
	local topic="perf-pp-$1-$$" f="${work}/pp-$1"
	tools org.apache.kafka.tools.TopicCommand --bootstrap-server "${bootstrap}" --create --topic "${topic}" \
		--partitions "${partitions}" --replication-factor 1 >/dev/null 2>&1
	local b0 b1
	b0="$(broker_ticks)"
	child_cpu "${f}" tools org.apache.kafka.tools.ProducerPerformance --topic "${topic}" --num-records "${records}" \
		--record-size 256 --throughput -1 --print-metrics \
		--producer-props bootstrap.servers="${bootstrap}" acks="${acks}"
	b1="$(broker_ticks)"
	tools org.apache.kafka.tools.TopicCommand --bootstrap-server "${bootstrap}" --delete --topic "${topic}" >/dev/null 2>&1
	local line rate rpr steady
	line="$(grep ' records sent, ' "${f}.log" | tail -1)"
	echo "$1 ProducerPerformance: ${line}" >&2
	rate="$(sed -n 's/.* records sent, \([0-9.]*\) records\/sec.*/\1/p' <<<"${line}")"
	rpr="$(awk '$1 ~ /^producer-metrics:records-per-request-avg:/ { print $NF }' "${f}.log" | tail -1)"
	# Its steady rate: the 5 s windows it prints while running, without the first (its JVM's
	# start-up and JIT, which qbench's warmup keeps out of qbench's rate).
	steady="$(grep ' records sent, ' "${f}.log" | sed '$d' | sed -n '2,$s/^\([0-9]*\) records sent, \([0-9.]*\) records\/sec.*/\1 \2/p' |
		awk '{ n += $1; t += $1 / $2 } END { if (t > 0) printf "%.1f", n / t; else print 0 }')"
	echo "${rate:-0} ${steady} $(per "$(awk -v c="$(cat "${f}")" 'BEGIN { print c * 1e6 }')" "${records}") $(per "$(((b1 - b0) * 1000000 / hz))" "${records}") ${rpr:-?}"
}

# run_q TAG: the same for qbench; its records are every acknowledged one (warm-up and drain too).
run_q() {
	local f="${work}/q-$1" sc="${work}/scenario-$1.yaml"
	cp "${work}/scenario.yaml" "${sc}"
	[[ "${role}" == produce ]] && echo "names: {topic: perf-q-$1-$$}" >>"${sc}"
	local b0 b1
	b0="$(broker_ticks)"
	child_cpu "${f}" "${work}/qbench" run -o "${f}.json" "${sc}"
	b1="$(broker_ticks)"
	[[ "${role}" == produce ]] && tools org.apache.kafka.tools.TopicCommand --bootstrap-server "${bootstrap}" \
		--delete --topic "perf-q-$1-$$" >/dev/null 2>&1
	grep -E 'produced|produce \(' "${f}.log" | sed "s/^/$1 qbench: /" >&2 || true
	local rate acked batches batched
	rate="$(grep -o '"produce_rate": *[0-9.]*' "${f}.json" | head -1 | sed 's/.*: *//')"
	acked="$(grep -o '"acked": *[0-9]*' "${f}.json" | head -1 | sed 's/.*: *//')"
	batches="$(grep -o '"produce.batches": *"[0-9]*"' "${f}.json" | head -1 | grep -o '[0-9]*"$' | tr -d '"')"
	batched="$(grep -o '"produce.batched_messages": *"[0-9]*"' "${f}.json" | head -1 | grep -o '[0-9]*"$' | tr -d '"')"
	echo "${rate:-0} $(per "$(awk -v c="$(cat "${f}")" 'BEGIN { print c * 1e6 }')" "${acked:-0}") $(per "$(((b1 - b0) * 1000000 / hz))" "${acked:-0}") $(per "${batched:-0}" "${batches:-0}")"
}

. scenarios/library/generator/machine.sh
echo "load before: $(cat /proc/loadavg)" >&2
for w in $(seq 1 "${warmup}"); do
	echo "warm-up ${w} (discarded): $(run_pp "w${w}") / $(run_q "w${w}")" >&2
done
ratios=() sratios=()
printf 'round order | ProducerPerformance rec/s steady cpu_us/rec broker_us/rec rec/req | qbench msg/s cpu_us/rec broker_us/rec rec/req | ratio, to steady\n'
for r in $(seq 1 "${rounds}"); do
	machine_mark
	if ((r % 2)); then
		order=AB pp="$(run_pp "${r}")" q="$(run_q "${r}")"
	else
		order=BA q="$(run_q "${r}")" pp="$(run_pp "${r}")"
	fi
	read -r pr ps pc pb preq <<<"${pp}"
	read -r qr qc qb qreq <<<"${q}"
	ratio="$(per "${qr}" "${pr}")" sratio="$(per "${qr}" "${ps}")"
	ratios+=("${ratio}")
	# A run too short for two progress windows after the first has no steady rate (0): left out.
	if [[ "${ps%.*}" -gt 0 ]]; then sratios+=("${sratio}"); fi
	printf 'round %d %s | %.0f %.0f %s %s %s | %.0f %s %s %s | %s, %s\n' "${r}" "${order}" "${pr}" "${ps}" "${pc}" "${pb}" \
		"${preq}" "${qr}" "${qc}" "${qb}" "${qreq}" "${ratio}" "${sratio}"
	machine_line "round ${r}:"
done
spread() {
	printf '%s\n' "${@:2}" | sort -g | awk -v what="$1" -v a="${acks}" -v p="${partitions}" -v role="${role}" -v l="$(cat /proc/loadavg)" '
		{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "ratio qbench / ProducerPerformance %s over %d rounds: median %.2f, range %.2f-%.2f (acks=%s, 256 B, %d partitions, qbench role %s; load %s)\n", what, NR, m, v[1], v[NR], a, p, role, l }'
}
spread "(whole run)" "${ratios[@]}"
if ((${#sratios[@]})); then spread "(its steady rate)" "${sratios[@]}"; fi
