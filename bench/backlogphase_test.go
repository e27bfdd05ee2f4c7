package bench_test

import (
	"fmt"
	"testing"
)

// A backlog phase fills the queue with consumers off, then times the drain: the filled count is
// what the fill's schedule offered, the drain ends at zero lag, every message arrives once, and
// the backlog's latency (it waited the fill out) is far above that of messages sent during the
// drain. With producers stopped the drain is the backlog alone.
func TestBacklogPhaseFillsThenDrains(t *testing.T) {
	cases := []struct {
		target, design, backlog string
		rate                    int64
		wantFilled              int64   // 0: rate x 1 s
		maxDrain                float64 // seconds
	}{
		{"embedded", "stream", "{messages: 1500}", 1000, 1500, 1.5},
		{"embedded", "stream", "{duration: 1s, producers: stop}", 1000, 0, 1.5},
		{"embedded", "list", "{messages: 1000, producers: stop}", 1000, 1000, 1.5},
		{"redis", "stream", "{duration: 1s}", 1000, 0, 1.5},
		// A Kafka producer waits for each acks=all send: a lower rate. A Kafka consumer joins
		// its group when it first reads: the drain includes the join (about 3 s), as a consumer
		// coming back after an outage would.
		{"kafka", "topic", "{messages: 400}", 400, 400, 8},
	}
	for _, c := range cases {
		t.Run(c.target+"/"+c.design+"/"+c.backlog, func(t *testing.T) {
			needTarget(t, c.target)
			res := run(t, scenario(t, fmt.Sprintf(`
engine: %s
design: %s
producers: 2
consumers: 2
rate: %d
duration: 1500ms
drain_timeout: 10s
backlog: %s
`, c.target, c.design, c.rate, c.backlog)))
			b := res.Summary.Backlog
			if b == nil {
				t.Fatal("no backlog block")
			}
			l := res.Summary.Ledger
			// A loaded machine (-race) may leave producers behind: sends cut off at the hard
			// stop fail (and may still arrive) and the rest is unsent, not filled.
			if l.Lost != 0 || l.Duplicates != 0 || l.Delivered != l.Acked+l.DeliveredUnacked {
				t.Fatalf("ledger %+v", l)
			}
			want := c.wantFilled
			if want == 0 {
				want = c.rate // 1 s of it
			}
			if behind := res.Summary.Unsent > 0 || l.Failed > 0; b.FilledMessages != want && !(behind && b.FilledMessages < want) {
				t.Fatalf("filled %d, want %d", b.FilledMessages, want)
			}
			if !b.Drained || b.LagSource != "engine" || b.DrainSeconds <= 0 || b.DrainSeconds > c.maxDrain+float64(res.Summary.Unsent)/float64(c.rate) {
				t.Fatalf("backlog %+v: want drained from the engine's lag within the run", b)
			}
			if b.FillSeconds < 0.9 || b.FillSeconds > 1.6 {
				t.Fatalf("fill took %.2f s, want about 1 s", b.FillSeconds)
			}
			if b.BacklogE2E.Count != b.FilledMessages+l.DeliveredUnacked {
				t.Fatalf("backlog e2e count %d, want %d", b.BacklogE2E.Count, b.FilledMessages)
			}
			// The oldest backlog message waited out the whole fill.
			if b.BacklogE2E.Max < int64(0.9e9) {
				t.Fatalf("backlog e2e max %d ns, want at least the fill", b.BacklogE2E.Max)
			}
			if b.NetDrainRate <= 0 || b.DrainRate < b.NetDrainRate/2 {
				t.Fatalf("drain rates %+v", b)
			}
			if b.Producers == "stop" {
				if b.DrainE2E.Count != 0 || l.Acked != b.FilledMessages {
					// Every message was intended during the fill.
					t.Fatalf("producers stopped, yet %d messages after the fill (acked %d)", b.DrainE2E.Count, l.Acked)
				}
			} else if b.DrainSeconds < b.FillSeconds/2 && b.DrainE2E.Count > 0 && b.DrainE2E.P50 >= b.BacklogE2E.P50 {
				// Only for a drain well shorter than the fill: one as long (Kafka's group join)
				// delays the new messages as much as the backlog.
				t.Fatalf("new messages' p50 %d >= the backlog's %d", b.DrainE2E.P50, b.BacklogE2E.P50)
			}
		})
	}
}

// Consumers that cannot catch up within the run: the summary says the backlog was not drained.
func TestBacklogNotDrainedIsSaid(t *testing.T) {
	res := run(t, scenario(t, `
engine: embedded
design: list
producers: 1
consumers: 1
rate: 1000
duration: 500ms
drain_timeout: 200ms
work: 2ms
backlog: {messages: 1000}
`))
	b := res.Summary.Backlog
	if b == nil || b.Drained || b.DrainSeconds < 0.5 {
		t.Fatalf("backlog %+v: want not drained after at least the duration", b)
	}
	if res.Summary.Ledger.Queued == 0 || res.Summary.Ledger.Lost != 0 {
		t.Fatalf("ledger %+v: the rest is queued", res.Summary.Ledger)
	}
}
