package bench_test

import "testing"

// A 3-node JetStream cluster on loopback with a limits stream of 3 replicas, read by two durable
// consumers (two receiving groups): every acknowledged message reaches both groups once, and a
// stall (every node stopped for 300 ms) delays but loses nothing.
func TestJetStreamClusterLimitsGroupsAndStall(t *testing.T) {
	needTarget(t, "jetstream")
	res := run(t, scenario(t, `
engine: jetstream
design: limits
producers: 2
consumers: 4
rate: 1000
duration: 3s
warmup: 0s
drain_timeout: 10s
jetstream:
  servers: 3
  replicas: 3
  groups: 2
faults:
  - {at: 1s, kind: stall, duration: 300ms}
`))
	l := res.Summary.Ledger
	if l.Acked != 3000 || l.Delivered != 6000 || l.Lost != 0 || l.Duplicates != 0 {
		t.Fatalf("ledger %+v: want 3000 acked, each delivered once to each of 2 groups", l)
	}
	if len(res.Faults) != 1 || res.Faults[0].Kind != "stall" || res.Faults[0].Error != "" || res.Faults[0].RecoverWriteNs < 0 {
		t.Fatalf("stall window %+v", res.Faults)
	}
	if s := res.Engine.Settings; s["servers"] != "3" || s["replicas"] != "3" || s["retention"] != "Limits" {
		t.Fatalf("facts %v: want 3 servers, 3 replicas, limits retention", s)
	}
	if p99 := res.Summary.Latency["produce"].P99; p99 < 200e6 {
		t.Errorf("produce p99 %d ns: the 300 ms stall should show in the tail", p99)
	}
}
