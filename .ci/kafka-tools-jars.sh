#!/usr/bin/env bash
# Gathers Apache Kafka's own tools (org.apache.kafka:kafka-tools: ProducerPerformance and the
# other kafka-*-perf-test classes) plus an SLF4J backend into a cache directory next to the
# broker's, with Maven, the same way .ci/kafka-jars.sh gathers the broker. They live in a
# directory of their own so that a broker started from the broker's libs/ never sees them.
#
#   .ci/kafka-tools-jars.sh      # version $QBENCH_KAFKA_VERSION or the default below
#   java -cp "$(.ci/kafka-tools-jars.sh)/libs/*" org.apache.kafka.tools.ProducerPerformance ...
#
# Idempotent: if <dir>/VERSION already names the version, nothing is fetched.
# Prints the directory on stdout; progress on stderr.
set -euo pipefail

version="${QBENCH_KAFKA_VERSION:-4.1.1}"
slf4j="${QBENCH_SLF4J_VERSION:-2.0.17}"
home="${QBENCH_KAFKA_TOOLS_HOME:-${HOME}/.cache/qbench/kafka-tools-${version}}"

if [[ -f "${home}/VERSION" ]] && [[ "$(cat "${home}/VERSION")" == "${version}" ]] \
	&& compgen -G "${home}/libs/kafka-tools-${version}.jar" >/dev/null; then
	echo "kafka-tools-jars: ${version} already in ${home}" >&2
	echo "${home}"
	exit 0
fi

command -v mvn >/dev/null || { echo "kafka-tools-jars: mvn not found (apt-get install maven)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cat >"${work}/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>qbench</groupId>
  <artifactId>kafka-tools-jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>${version}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>${slf4j}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>${slf4j}</version></dependency>
  </dependencies>
</project>
POM

echo "kafka-tools-jars: resolving org.apache.kafka:kafka-tools:${version} into ${home}" >&2
mkdir -p "${home}.tmp.$$/libs"
mvn -q -B -f "${work}/pom.xml" dependency:copy-dependencies \
	-DincludeScope=runtime -DoutputDirectory="${home}.tmp.$$/libs" >&2
echo "${version}" >"${home}.tmp.$$/VERSION"
# Publish atomically so a half-filled directory is never mistaken for a complete one.
rm -rf "${home}"
mkdir -p "$(dirname "${home}")"
mv "${home}.tmp.$$" "${home}"
echo "kafka-tools-jars: $(ls "${home}/libs" | wc -l) jars in ${home}" >&2
echo "${home}"
