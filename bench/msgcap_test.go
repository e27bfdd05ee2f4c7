package bench_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"qbench/scenarios"
)

// A rate: max run stops producing at the message cap its memory budget gives (here a budget of
// 20,000 messages' ledger bytes), drains what it sent, and says so in a warning; it is not an
// interrupted run, and nothing is lost.
func TestRateMaxStopsAtItsMessageCap(t *testing.T) {
	const capMessages = 20000
	per := scenarios.LedgerBytesPerMessage(1)
	t.Setenv(scenarios.MemoryBudgetEnv, strconv.FormatInt(capMessages*per, 10))
	sc := scenario(t, "engine: nullq\nrate: max\nduration: 3s\nwarmup: 0s\nproducers: 2\nconsumers: 2\n")
	if got := sc.MessageCap(); got != capMessages {
		t.Fatalf("MessageCap %d, want %d", got, capMessages)
	}
	began := time.Now()
	res := run(t, sc)
	took := time.Since(began)
	l := res.Summary.Ledger
	if res.Interrupted || l.Lost != 0 {
		t.Fatalf("interrupted %v, ledger %+v", res.Interrupted, l)
	}
	// The cap is checked every few milliseconds on what was answered, so a little more is sent
	// (batches in flight, the poll): tens of milliseconds' worth, against the ~1M messages three
	// seconds of the null engine would send.
	if l.Sent < capMessages || l.Sent > 5*capMessages || took > 2*time.Second {
		t.Fatalf("sent %d in %s, want the cap %d and a little more, well before the 3 s duration", l.Sent, took, capMessages)
	}
	t.Logf("sent %d (cap %d) in %s", l.Sent, capMessages, took.Round(time.Millisecond))
	var warned bool
	for _, w := range res.Summary.Warnings {
		warned = warned || strings.Contains(w, "rate: max stopped producing at its message cap, 20000 messages")
	}
	if !warned {
		t.Fatalf("no cap warning: %q", res.Summary.Warnings)
	}
}
