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

// A consumer that crashes holding a batch keeps it, in the per-consumer pending at the end, as
// long as ack_wait has not handed it to another: JetStream counts num_ack_pending per durable,
// the engine per client. The batch was delivered before the crash, and nothing is lost.
func TestJetStreamPendingByConsumerAfterCrash(t *testing.T) {
	needTarget(t, "jetstream")
	res := run(t, scenario(t, `
engine: jetstream
design: workqueue
producers: 1
consumers: 2
rate: 500
duration: 2s
warmup: 0s
drain_timeout: 2s
jetstream:
  ack_wait: 1m
  fetch: 10
faults:
  - {at: 500ms, kind: consumer-crash, consumer: 0}
`))
	pc, l := res.Summary.PerConsumer, res.Summary.Ledger
	if len(pc) != 2 || pc[0].Pending == nil || pc[1].Pending == nil {
		t.Fatalf("per consumer %+v: want both pending counts", pc)
	}
	if *pc[0].Pending < 1 || *pc[0].Pending > 10 || *pc[1].Pending != 0 {
		t.Fatalf("pending at end %d and %d: want the crashed consumer's batch (1 to 10) and 0", *pc[0].Pending, *pc[1].Pending)
	}
	if l.Lost != 0 || l.Delivered != l.Acked {
		t.Fatalf("ledger %+v: want every message delivered, nothing lost", l)
	}
}
