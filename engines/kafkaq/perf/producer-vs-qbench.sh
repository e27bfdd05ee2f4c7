#!/usr/bin/env bash
# Kafka's own producer benchmark against qbench's, on one broker, alternately.
#
# Starts one single-node KRaft broker the way qbench does (engines/procs: same server.properties
# and JVM flags, jars from .ci/kafka-jars.sh), then ROUNDS times runs
#   1. org.apache.kafka.tools.ProducerPerformance (jars from .ci/kafka-tools-jars.sh) on a topic of
#      PARTITIONS partitions: --record-size 256 --throughput -1, acks=all, and
#   2. qbench run SCENARIO (default scenarios/kafka-max-rate.yaml) against the same broker
#      (engine kafka-url; qbench makes its own topic with the scenario's partitions),
# and prints each one's records/s and the ratio qbench / ProducerPerformance, with the round's machine
# state (load average, steal, other processes' CPU: scenarios/bench/machine.sh).
#
#   engines/kafkaq/perf/producer-vs-qbench.sh             # from the repository root
#   ROUNDS=3 RECORDS=3000000 engines/kafkaq/perf/producer-vs-qbench.sh scenarios/kafka-max-rate.yaml
#
# Public tools only: bash, java, go (to build qbench), grep, sed, awk. The broker is stopped by
# PID and its directory removed on exit.
set -euo pipefail

scenario="${1:-scenarios/kafka-max-rate.yaml}"
rounds="${ROUNDS:-2}"
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

. scenarios/bench/machine.sh
pp_rates=() q_rates=()
for r in $(seq 1 "${rounds}"); do
	machine_mark
	topic="perf-${r}-$$"
	tools org.apache.kafka.tools.TopicCommand --bootstrap-server "${bootstrap}" --create --topic "${topic}" \
		--partitions "${partitions}" --replication-factor 1 >/dev/null 2>&1
	out="$(tools org.apache.kafka.tools.ProducerPerformance --topic "${topic}" --num-records "${records}" \
		--record-size 256 --throughput -1 --producer-props bootstrap.servers="${bootstrap}" acks="${acks}" 2>&1 | tail -1)"
	echo "round ${r} ProducerPerformance: ${out}" >&2
	pp="$(sed -n 's/.* records sent, \([0-9.]*\) records\/sec.*/\1/p' <<<"${out}")"
	tools org.apache.kafka.tools.TopicCommand --bootstrap-server "${bootstrap}" --delete --topic "${topic}" >/dev/null 2>&1
	"${work}/qbench" run -o "${work}/result-${r}.json" "${work}/scenario.yaml" >"${work}/summary-${r}.txt" 2>&1
	grep -E 'produced|produce \(' "${work}/summary-${r}.txt" | sed "s/^/round ${r} qbench: /" >&2
	q="$(grep -o '"produce_rate": *[0-9.]*' "${work}/result-${r}.json" | head -1 | sed 's/.*: *//')"
	pp_rates+=("${pp}") q_rates+=("${q}")
	printf 'round %d: ProducerPerformance %.0f records/s, qbench %.0f msg/s, ratio %.2f\n' \
		"${r}" "${pp}" "${q}" "$(awk -v a="${q}" -v b="${pp}" 'BEGIN { print a / b }')"
	machine_line "round ${r}:"
done
best() { printf '%s\n' "$@" | sort -g | tail -1; }
bp="$(best "${pp_rates[@]}")" bq="$(best "${q_rates[@]}")"
printf 'best of %d: ProducerPerformance %.0f records/s, qbench %.0f msg/s, ratio %.2f (acks=%s, 256 B, %d partitions)\n' \
	"${rounds}" "${bp}" "${bq}" "$(awk -v a="${bq}" -v b="${bp}" 'BEGIN { print a / b }')" "${acks}" "${partitions}"
