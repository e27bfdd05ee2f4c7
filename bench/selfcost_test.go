package bench

import (
	"math"
	"runtime"
	"testing"
	"time"

	"qbench/results"
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

// The engine server's CPU is a share of the same window as qbench's, and unknown stays 0.
func TestSelfCostFillsEngineShare(t *testing.T) {
	t0 := time.Now()
	cpus := float64(runtime.NumCPU())
	cases := []struct {
		name     string
		engineNs int64
		want     float64
	}{
		{"known: one core for the whole window", int64(2 * time.Second), 1 / cpus},
		{"known: idle", 0, 0},
		{"not known", -1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := selfCost{startAt: t0, endAt: t0.Add(2 * time.Second), user1: time.Second}
			var g results.Generator
			sc.fill(&g, 100, nil, c.engineNs)
			if math.Abs(g.EngineCPUShare-c.want) > 1e-9 {
				t.Fatalf("engine share %v, want %v", g.EngineCPUShare, c.want)
			}
			if math.Abs(g.CPUShare-0.5/cpus) > 1e-9 {
				t.Fatalf("qbench share %v, want %v", g.CPUShare, 0.5/cpus)
			}
		})
	}
}
