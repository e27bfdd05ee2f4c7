//go:build linux

package bench

import (
	"testing"
	"time"
)

// A precise sleep ends early only to spin: it never returns before its deadline, whatever the
// wake-up latency estimate says, for waits shorter and longer than the estimate.
func TestPreciseSleepNeverReturnsEarly(t *testing.T) {
	saved := wakeLateNs.Load()
	defer wakeLateNs.Store(saved)
	for _, est := range []time.Duration{0, 50 * time.Microsecond, maxAnticipation} {
		for _, d := range []time.Duration{time.Microsecond, 30 * time.Microsecond, 200 * time.Microsecond, 2 * time.Millisecond} {
			wakeLateNs.Store(int64(est))
			start := time.Now()
			preciseSleep(d)
			if got := time.Since(start); got < d {
				t.Errorf("estimate %s: preciseSleep(%s) returned after %s", est, d, got)
			}
			if late := time.Duration(wakeLateNs.Load()); late < 0 || late > maxAnticipation {
				t.Errorf("wake-up estimate %s out of [0, %s]", late, maxAnticipation)
			}
		}
	}
}
