package bench

import (
	"testing"
	"time"
)

// A value recorded under a kind lands in that kind's histograms (the hot path indexes them by
// position), in the measured one only when asked.
func TestRecorderKinds(t *testing.T) {
	for i, k := range kinds {
		rec := newRecorder(time.Second)
		rec.record(k, int64(1000*(i+1)), true)
		rec.record(k, 5, false)
		for _, other := range kinds {
			wantInterval, wantMeasured := int64(0), int64(0)
			if other == k {
				wantInterval, wantMeasured = 2, 1
			}
			if n := rec.interval[other].TotalCount(); n != wantInterval {
				t.Fatalf("record(%s): interval[%s] has %d values, want %d", k, other, n, wantInterval)
			}
			if n := rec.measured[other].TotalCount(); n != wantMeasured {
				t.Fatalf("record(%s): measured[%s] has %d values, want %d", k, other, n, wantMeasured)
			}
		}
		if max := rec.measured[k].Max(); max < int64(1000*(i+1)) {
			t.Fatalf("record(%s): measured max %d", k, max)
		}
	}
}
