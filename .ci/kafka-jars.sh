#!/usr/bin/env bash
# Gathers the jars of a single Apache Kafka broker (org.apache.kafka:kafka_2.13) plus an SLF4J
# backend into a cache directory, with Maven. The kafka engine (engines/kafkaq) starts the broker
# from this directory with plain `java -cp '<dir>/libs/*'`.
#
#   .ci/kafka-jars.sh            # version $QBENCH_KAFKA_VERSION or the default below
#   QBENCH_KAFKA_HOME=/opt/k .ci/kafka-jars.sh
#
# QBENCH_KAFKA_ARTIFACT gathers another artifact of the same release the same way (default
# kafka_2.13, the broker; .ci/kafka-tools-jars.sh sets kafka-tools).
#
# Idempotent: if <dir>/VERSION already names the version, nothing is fetched.
# Prints the directory on stdout; progress on stderr.
set -euo pipefail

version="${QBENCH_KAFKA_VERSION:-4.1.1}"
slf4j="${QBENCH_SLF4J_VERSION:-2.0.17}"
artifact="${QBENCH_KAFKA_ARTIFACT:-kafka_2.13}"
home="${QBENCH_KAFKA_HOME:-${HOME}/.cache/qbench/kafka-${version}}"
name="$(basename "$0" .sh)"

if [[ -f "${home}/VERSION" ]] && [[ "$(cat "${home}/VERSION")" == "${version}" ]] \
	&& compgen -G "${home}/libs/${artifact}-*.jar" >/dev/null; then
	echo "${name}: ${version} already in ${home}" >&2
	echo "${home}"
	exit 0
fi

command -v mvn >/dev/null || { echo "${name}: mvn not found (apt-get install maven)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cat >"${work}/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>qbench</groupId>
  <artifactId>${artifact}-jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>${artifact}</artifactId><version>${version}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>${slf4j}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>${slf4j}</version></dependency>
  </dependencies>
</project>
POM

echo "${name}: resolving org.apache.kafka:${artifact}:${version} into ${home}" >&2
mkdir -p "${home}.tmp.$$/libs"
mvn -q -B -f "${work}/pom.xml" dependency:copy-dependencies \
	-DincludeScope=runtime -DoutputDirectory="${home}.tmp.$$/libs" >&2
echo "${version}" >"${home}.tmp.$$/VERSION"
# Publish atomically so a half-filled directory is never mistaken for a complete one.
rm -rf "${home}"
mkdir -p "$(dirname "${home}")"
mv "${home}.tmp.$$" "${home}"
echo "${name}: $(ls "${home}/libs" | wc -l) jars in ${home}" >&2
echo "${home}"
