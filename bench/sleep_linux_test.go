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
			for _, yield := range []bool{true, false} {
				wakeLateNs.Store(int64(est))
				start := time.Now()
				preciseSleepYield(d, yield, nil)
				if got := time.Since(start); got < d {
					t.Errorf("estimate %s, yield %v: preciseSleep(%s) returned after %s", est, yield, d, got)
				}
			}
			if late := time.Duration(wakeLateNs.Load()); late < 0 || late > maxAnticipation {
				t.Errorf("wake-up estimate %s out of [0, %s]", late, maxAnticipation)
			}
		}
	}
}

// A handoff runs its function when the time armed passes before disarm, and never after a
// disarm that returned true; re-armed, it fires again.
func TestHandoff(t *testing.T) {
	fired := make(chan struct{}, 4)
	h := newHandoff(func() { fired <- struct{}{} })
	defer h.close()
	for round := range 3 {
		h.arm(2 * time.Millisecond)
		select {
		case <-fired:
		case <-time.After(2 * time.Second):
			t.Fatalf("round %d: armed for 2 ms, not fired after 2 s", round)
		}
		if h.disarm() {
			t.Fatalf("round %d: disarm after firing returned true", round)
		}
	}
	for round := range 20 {
		h.arm(50 * time.Millisecond)
		time.Sleep(time.Duration(round) * 100 * time.Microsecond)
		if !h.disarm() {
			t.Fatalf("round %d: disarmed well before 50 ms, yet fired", round)
		}
	}
	select {
	case <-fired:
		t.Fatal("fired after a successful disarm")
	case <-time.After(80 * time.Millisecond):
	}
}
