package procs

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestKafkaHomeMissingNamesTheScript(t *testing.T) {
	t.Setenv("QBENCH_KAFKA_HOME", t.TempDir())
	_, err := KafkaHome()
	if err == nil || !strings.Contains(err.Error(), ".ci/kafka-jars.sh") {
		t.Fatalf("KafkaHome() = %v, want an error naming .ci/kafka-jars.sh", err)
	}
}

func TestKafkaVersionFromJar(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(dir+"/libs", 0o755)
	for _, f := range []string{"kafka-clients-4.1.1.jar", "kafka_2.13-4.1.1.jar", "scala-library-2.13.16.jar"} {
		os.WriteFile(dir+"/libs/"+f, nil, 0o644)
	}
	if v, err := kafkaVersion(dir); err != nil || v != "4.1.1" {
		t.Fatalf("kafkaVersion = %q, %v", v, err)
	}
}

// A broker that cannot start (a bad setting) is reported with its own words, and leaves no
// process behind. Needs the jars: skipped without them, failed under CI=true.
func TestKafkaBadSettingFailsWithLog(t *testing.T) {
	home, err := KafkaHome()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k, err := StartKafka(ctx, KafkaConfig{Home: home, Dir: t.TempDir(),
		Settings:   map[string]string{"log.flush.interval.messages": "often"},
		JVMOptions: []string{"-Xmx256m"}})
	if err == nil {
		k.Kill()
		t.Fatal("broker started with log.flush.interval.messages=often")
	}
	t.Logf("%.300s", err)
	if !strings.Contains(err.Error(), "log.flush.interval.messages") {
		t.Fatalf("error does not name the setting: %v", err)
	}
}
