package bench

import (
	"math"
	"testing"
	"time"
)

func TestCPUFigures(t *testing.T) {
	cases := []struct {
		cpu, wall     time.Duration
		cpus          int
		messages      int64
		perMsg, share float64
	}{
		{2 * time.Second, 4 * time.Second, 2, 1_000_000, 2000, 0.25},
		{time.Second, time.Second, 1, 4, 250_000_000, 1},
		{0, time.Second, 2, 10, 0, 0},
		{time.Second, 0, 2, 0, 0, 0}, // nothing handled, no wall time: no division by zero
	}
	for _, c := range cases {
		perMsg, share := cpuFigures(c.cpu, c.wall, c.cpus, c.messages)
		if math.Abs(perMsg-c.perMsg) > 1e-9 || math.Abs(share-c.share) > 1e-9 {
			t.Errorf("%+v: per message %v, share %v", c, perMsg, share)
		}
	}
}

// getrusage advances with work this process does.
func TestCPUTimesAdvance(t *testing.T) {
	u0, s0 := cpuTimes()
	deadline := time.Now().Add(30 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	u1, s1 := cpuTimes()
	if (u1+s1)-(u0+s0) < 10*time.Millisecond {
		t.Fatalf("30 ms of spinning took %v of CPU (x=%d)", (u1+s1)-(u0+s0), x)
	}
}
