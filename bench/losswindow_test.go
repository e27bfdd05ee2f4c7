package bench_test

import (
	"testing"
	"time"
)

// A crash of a redis-server without persistence, with consumers paused for the second before it,
// loses the backlog: the crash's window says how far back the loss reaches (the loss window:
// about the pause, in time, and the lost count in messages) and what survived last (the last
// durable point, before the oldest loss).
func TestCrashReportsItsLossWindow(t *testing.T) {
	needTarget(t, "redis")
	res := run(t, scenario(t, `
engine: redis
policy: none
rate: 1000
consumers: 2
duration: 3s
faults:
  - {at: 1s, kind: consumer-pause, consumer: 0, duration: 1200ms}
  - {at: 1s, kind: consumer-pause, consumer: 1, duration: 1200ms}
  - {at: 2s, kind: server-crash, duration: 300ms}
`))
	var found bool
	for _, w := range res.Faults {
		if w.Kind != "server-crash" {
			continue
		}
		found = true
		if w.Lost == 0 {
			t.Fatalf("the crash lost nothing: %+v", w)
		}
		lw := time.Duration(w.LossWindowNs)
		if lw < 500*time.Millisecond || lw > 1500*time.Millisecond {
			t.Errorf("loss window %s, want about the 1 s of backlog before the crash", lw)
		}
		if w.LastDurableNs < 0 || w.LastDurableNs >= w.StartNs-w.LossWindowNs {
			t.Errorf("last durable point %s, want before the oldest loss at %s", time.Duration(w.LastDurableNs), time.Duration(w.StartNs-w.LossWindowNs))
		}
		t.Logf("crash at %s lost %d: loss window %s, last durable point %s", time.Duration(w.StartNs), w.Lost, lw, time.Duration(w.LastDurableNs))
	}
	if !found {
		t.Fatal("no server-crash window")
	}
}
