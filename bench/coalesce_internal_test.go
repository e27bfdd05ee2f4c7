package bench

import (
	"testing"
	"time"
)

// TestCoalesces checks when a producer on time sleeps coalesceSleep to send several messages as
// one batch instead of sleeping until the next one: only with batches in flight, batches of
// coalesceMin or more, and a schedule dense enough that that many fall due within coalesceSleep.
func TestCoalesces(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rate        float64
		producers   int
		busy, batch int
		seq         uint64
		want        bool
	}{
		{"200k over 4, batches in flight", 200000, 4, 1, 128, 1000, true},
		{"200k over 4, nothing in flight (the floor's rule)", 200000, 4, 0, 128, 1000, false},
		{"200k over 4, batch 1", 200000, 4, 3, 1, 1000, false},
		{"200k over 4, batch 3", 200000, 4, 3, 3, 1000, false},
		{"one producer at 10k (a message every 100 us)", 10000, 1, 2, 16, 1000, false},
		{"one producer at 1,000 (the floor)", 1000, 1, 1, 16, 10, false},
		{"one producer at 20k: 5 due within 250 us", 20000, 1, 1, 16, 1000, true},
		{"one producer at 12k: 3 due within 250 us", 12000, 1, 1, 16, 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc := &pacing{pacer: NewPacer(tc.rate, 0, tc.producers, time.Hour), seq: tc.seq}
			pc.busy.Store(int64(tc.busy))
			next := pc.pacer.IntendedAt(tc.seq)
			// Checked just after the previous message was sent: the next is one interval away.
			now := pc.pacer.IntendedAt(tc.seq - 1)
			if got := pc.coalesces(next-now, now, tc.batch); got != tc.want {
				t.Errorf("coalesces(wait %v) = %v, want %v", next-now, got, tc.want)
			}
			// A wait of coalesceSleep or more is slept as it is.
			if pc.coalesces(coalesceSleep, next-coalesceSleep, tc.batch) {
				t.Errorf("coalesces(wait %v) = true, want false", coalesceSleep)
			}
		})
	}
}
