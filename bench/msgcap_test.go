package bench_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"qbench/scenarios"
)

// A run's ledger keeps what is unresolved: when its consumers stop reading (here paused for the
// whole of a rate: max run), the backlog grows until the ledger reaches the memory budget (here
// 20,000 unresolved messages' bytes), and the producers stop there; the run drains as usual,
// says so in a warning, and is not interrupted.
func TestProducingStopsAtTheMemoryBudget(t *testing.T) {
	const capMessages = 20000
	per := scenarios.UnresolvedBytesPerMessage(1)
	t.Setenv(scenarios.MemoryBudgetEnv, strconv.FormatInt(capMessages*per, 10))
	sc := scenario(t, "engine: nullq\nrate: max\nduration: 3s\nwarmup: 0s\nproducers: 2\nconsumers: 1\ndrain_timeout: 5s\n"+
		"faults:\n  - {at: 0s, kind: consumer-pause, consumer: 0, duration: 1500ms}\n")
	began := time.Now()
	res := run(t, sc)
	took := time.Since(began)
	l := res.Summary.Ledger
	if res.Interrupted || l.Lost != 0 {
		t.Fatalf("interrupted %v, ledger %+v", res.Interrupted, l)
	}
	// The budget is checked every few milliseconds on what is held, so a little more is sent
	// (batches in flight, the poll): tens of milliseconds' worth, against the millions three
	// seconds of the null engine would send.
	if l.Sent < capMessages || l.Sent > 5*capMessages || took > 2800*time.Millisecond {
		t.Fatalf("sent %d in %s, want the cap %d and a little more, before the 3 s duration", l.Sent, took, capMessages)
	}
	t.Logf("sent %d (cap %d) in %s", l.Sent, capMessages, took.Round(time.Millisecond))
	var warned bool
	for _, w := range res.Summary.Warnings {
		warned = warned || strings.Contains(w, "producing stopped at the memory budget after")
	}
	if !warned {
		t.Fatalf("no budget warning: %q", res.Summary.Warnings)
	}
}
