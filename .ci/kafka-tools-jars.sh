#!/usr/bin/env bash
# Gathers Apache Kafka's own tools (org.apache.kafka:kafka-tools: ProducerPerformance and the
# other kafka-*-perf-test classes) plus an SLF4J backend into a cache directory next to the
# broker's, with .ci/kafka-jars.sh. They live in a directory of their own so that a broker started
# from the broker's libs/ never sees them.
#
#   .ci/kafka-tools-jars.sh      # version $QBENCH_KAFKA_VERSION or the default of kafka-jars.sh
#   java -cp "$(.ci/kafka-tools-jars.sh)/libs/*" org.apache.kafka.tools.ProducerPerformance ...
#
# Idempotent; prints the directory on stdout, progress on stderr.
set -euo pipefail
version="${QBENCH_KAFKA_VERSION:-4.1.1}"
QBENCH_KAFKA_ARTIFACT=kafka-tools \
	QBENCH_KAFKA_HOME="${QBENCH_KAFKA_TOOLS_HOME:-${HOME}/.cache/qbench/kafka-tools-${version}}" \
	exec "$(dirname "$0")/kafka-jars.sh"
