package bench_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"qbench/engines/kafkaq"
	"qbench/engines/procs"
	"qbench/scenarios"
)

// One Kafka broker for the package, started by the first test that needs it and stopped by
// TestMain: a broker's start costs 15-30 s on the loaded 2-core CI machine (more than most of
// the runs the tests make on it), and the tests' own runs use their own topics. Scenarios with
// faults (the broker's crash, power loss, leader kill; a consumer's crash) or a cluster still
// start their own through engine kafka: the failure library and the engines' tests cover starting one.
var sharedKafka struct {
	once sync.Once
	k    *procs.Kafka
	dir  string
	err  error
}

// kafkaAddr is the shared broker's address, starting it on first use; the test skips (fails
// under CI=true) without java or the jars.
func kafkaAddr(t testing.TB) string {
	t.Helper()
	sharedKafka.once.Do(func() {
		dir, err := os.MkdirTemp("", "qbench-bench-kafka-")
		if err != nil {
			sharedKafka.err = err
			return
		}
		sharedKafka.dir = dir
		began := time.Now()
		sharedKafka.k, sharedKafka.err = procs.StartKafka(context.Background(), procs.KafkaConfig{Dir: dir, Probe: kafkaq.Probe,
			JVMOptions: append([]string{"-Xms256m", "-Xmx512m"}, procs.DefaultKafkaJVMOptions[2:]...)})
		if sharedKafka.err == nil {
			fmt.Fprintf(os.Stderr, "bench test: shared Kafka broker pid %d at %s, started in %v\n",
				sharedKafka.k.PID(), sharedKafka.k.Addr(), time.Since(began).Round(time.Millisecond))
		}
	})
	if sharedKafka.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared kafka broker: %v", sharedKafka.err)
		}
		t.Skipf("kafka broker unavailable (run .ci/kafka-jars.sh; needs java): %v", sharedKafka.err)
	}
	return sharedKafka.k.Addr()
}

// stopSharedKafka stops the shared broker, if a test started it, and removes its directory.
func stopSharedKafka() {
	if sharedKafka.k != nil {
		_ = sharedKafka.k.Stop(10 * time.Second)
	}
	if sharedKafka.dir != "" {
		os.RemoveAll(sharedKafka.dir)
	}
}

var (
	managedKafkaLine = regexp.MustCompile(`(?m)^engine: kafka[ \t]*$`)
	// Scenarios that need a broker of their own: any with faults (the Kafka engine's act on the
	// broker; a consumer crash on a warm shared broker put a rebalance's duplicates outside the
	// crash window in 2 of 4 runs, where a fresh broker's group did not), and brokers and broker
	// settings make a new one.
	ownBroker = regexp.MustCompile(`(?m)^(faults:|\s+brokers:|\s+broker:)`)
	kafkaRuns atomic.Int64
)

// onSharedKafka rewrites a test scenario on engine kafka that needs no broker of its own to
// engine kafka-url on the shared broker; ok is false when it needs its own (or is not Kafka's).
func onSharedKafka(t testing.TB, yaml string) (string, bool) {
	if !managedKafkaLine.MatchString(yaml) || ownBroker.MatchString(yaml) {
		return yaml, false
	}
	needKafka(t)
	addr := kafkaAddr(t)
	return managedKafkaLine.ReplaceAllString(yaml, "engine: kafka-url\naddress: "+addr), true
}

// moveToSharedKafka puts a loaded scenario on engine kafka onto the shared broker when it needs
// no broker of its own (no faults, no brokers or broker settings).
func moveToSharedKafka(t testing.TB, sc *scenarios.Scenario) {
	if sc.Engine != "kafka" || len(sc.Faults) > 0 {
		return
	}
	if o, ok := sc.Options.(kafkaq.Options); ok && (o.Brokers > 1 || len(o.Broker) > 0) {
		return
	}
	sc.Engine, sc.Address = "kafka-url", kafkaAddr(t)
	onShared.Store(sc, true)
}

// sharedRunID names a run on the shared broker uniquely: the default run ID (Unix seconds and
// PID) names its topic and group, and two runs of one second would share them.
func sharedRunID() string {
	return fmt.Sprintf("bench-test-%d-%d", os.Getpid(), kafkaRuns.Add(1))
}
