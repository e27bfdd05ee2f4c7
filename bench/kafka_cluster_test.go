package bench_test

import (
	"os"
	"strings"
	"testing"
)

// node-restart through the runner on a three-broker cluster: the partition leader is shut down
// cleanly (leadership handed over first) and started again; the window ends when it is back,
// names the broker, and nothing acknowledged is lost. A fourth cluster start on top of the
// failure library's two and the engine's own test, so QBENCH_SOAK=1 only.
func TestKafkaNodeRestartThroughRunner(t *testing.T) {
	if os.Getenv("QBENCH_SOAK") != "1" {
		t.Skip("soak: set QBENCH_SOAK=1")
	}
	needTarget(t, "kafka")
	res := run(t, scenario(t, `
engine: kafka
producers: 2
consumers: 2
rate: 500
duration: 10s
drain_timeout: 20s
kafka:
  brokers: 3
  acks: all
  min_insync_replicas: 2
faults:
  - {at: 2s, kind: node-restart, duration: 1s}
`))
	f := faultOf(t, res, "node-restart")
	t.Logf("node-restart: %s, lasted %.2fs, produce errors %d, duplicates %d", f.Target, float64(f.EndNs-f.StartNs)/1e9, f.ProduceErrors, res.Summary.Ledger.Duplicates)
	expect(t, res, f.Error == "" && strings.HasPrefix(f.Target, "broker ") && f.EndNs-f.StartNs >= 1e9 && res.Summary.Ledger.Lost == 0,
		"the leader restarted cleanly, the window lasting until it was back, nothing lost")
}
