package bench

import (
	"testing"
	"time"
)

// Two machines whose wall clocks are off the engine's by different amounts (one 5 s ahead, one 3 s
// behind, each offset known), whose epochs fall at different instants: a message's end-to-end
// latency, from the producer's stamp to the consumer's receipt, comes out as the true one.
func TestStampShiftPutsLatencyOnTheEngineClock(t *testing.T) {
	start := time.Unix(1_800_000_000, 0) // the shared start, on the engine's clock
	for _, tc := range []struct {
		name                  string
		skewA, skewB          time.Duration // each machine's clock minus the engine's
		epochA, epochB        time.Duration // each epoch after the start, on the engine's clock
		intended, trueLatency time.Duration
	}{
		{"clocks apart", 5 * time.Second, -3 * time.Second, 120 * time.Microsecond, 2 * time.Millisecond, 400 * time.Millisecond, 3 * time.Millisecond},
		{"one clock", 0, 0, 0, 0, time.Second, 250 * time.Microsecond},
		{"the consumer's epoch first", -time.Second, time.Second, 5 * time.Millisecond, 0, 10 * time.Millisecond, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mk := func(skew, epoch time.Duration) *run {
				return &run{epoch: start.Add(epoch + skew), seg: &segmentRun{opts: SegmentOptions{StartAt: start}, offset: -skew}}
			}
			a, b := mk(tc.skewA, tc.epochA), mk(tc.skewB, tc.epochB)
			wire := int64(tc.intended) + a.stampShift() // what producer A stamps
			// B receives it trueLatency after its intended instant, on the engine's clock, and
			// reads the time on its own monotonic clock since its epoch.
			receipt := start.Add(tc.epochA + tc.intended + tc.trueLatency)
			at := int64(receipt.Sub(start.Add(tc.epochB)))
			if got := time.Duration(at - (wire - b.stampShift())); got != tc.trueLatency {
				t.Errorf("e2e = %s, want %s", got, tc.trueLatency)
			}
		})
	}
}
