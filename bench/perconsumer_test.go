package bench_test

import (
	"bytes"
	"strings"
	"testing"

	"qbench/results"
)

// Each consumer's share is in the summary: of two competing consumers, the one slowed by its
// work for the whole run takes fewer deliveries; the shares add up to the run's deliveries and
// latency counts; the summary prints a line per consumer.
func TestPerConsumerShowsASlowConsumersShare(t *testing.T) {
	res := run(t, scenario(t, `
engine: embedded
design: stream
producers: 1
consumers: 2
rate: 1000
duration: 3s
redis:
  stream:
    count: 10
faults:
  - {at: 0s, kind: slow-consumer, consumer: 0, duration: 8s, work: {dist: fixed, value: 4ms}}
`))
	pc := res.Summary.PerConsumer
	if len(pc) != 2 {
		t.Fatalf("per consumer %+v", pc)
	}
	if pc[0].Deliveries+pc[1].Deliveries != res.Summary.Ledger.Deliveries {
		t.Errorf("shares %d + %d, the run's deliveries %d", pc[0].Deliveries, pc[1].Deliveries, res.Summary.Ledger.Deliveries)
	}
	if pc[0].Deliveries*2 > pc[1].Deliveries {
		t.Errorf("slow consumer 0 took %d deliveries against consumer 1's %d, want well under half", pc[0].Deliveries, pc[1].Deliveries)
	}
	// Latency is taken at receipt, before the work: each consumer has its own percentiles, and
	// together they count every first measured delivery.
	if pc[0].E2E.Count == 0 || pc[1].E2E.Count == 0 || pc[0].E2E.Count+pc[1].E2E.Count != res.Summary.Latency["e2e"].Count {
		t.Errorf("e2e counts %d + %d, the run's %d", pc[0].E2E.Count, pc[1].E2E.Count, res.Summary.Latency["e2e"].Count)
	}
	var b bytes.Buffer
	if err := results.WriteSummary(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "per consumer:") {
		t.Errorf("summary lacks the per-consumer lines:\n%s", b.String())
	}
}
