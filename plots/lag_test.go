package plots_test

import (
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// The lag chart draws the sub-second readings taken around a fault between the per-second
// ones, in time order, so a backlog that built and drained within a second stands at its height;
// each per-second reading stands where it was taken, at its interval's end.
func TestLagPointsIncludeSubSecondSamples(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Seed: 1, Seconds: 8, Warmup: 1, StallAt: 4 * time.Second, StallFor: 700 * time.Millisecond})
	ms := int64(time.Millisecond)
	r.LagSamples = []results.LagSample{
		{AtNs: 4100 * ms, Lag: 300, EngineLag: &results.EngineLag{Backlog: 290, Pending: 8}},
		{AtNs: 4200 * ms, Lag: 1498}, // the engine did not answer: no engine point
		{AtNs: 4300 * ms, Lag: 450, EngineLag: &results.EngineLag{Backlog: 440, Pending: 9}},
	}
	own, eng := plots.LagPoints(r)
	if len(own) != len(r.Series)+3 {
		t.Fatalf("%d generator points for %d intervals and 3 samples", len(own), len(r.Series))
	}
	peak, peakAt := 0.0, 0.0
	for i, p := range own {
		if i > 0 && p.X < own[i-1].X {
			t.Fatalf("generator points out of order at %d", i)
		}
		if p.Y > peak {
			peak, peakAt = p.Y, p.X
		}
	}
	if peak != 1498 || peakAt != 4.2 {
		t.Errorf("peak %v at %vs, want the sample's 1498 at 4.2s", peak, peakAt)
	}
	if own[0].X != float64(r.Series[1].StartNs)/1e9 {
		t.Errorf("first reading at %vs, want its interval's end %vs", own[0].X, float64(r.Series[1].StartNs)/1e9)
	}
	found := 0
	for _, p := range eng {
		if (p.X == 4.1 && p.Y == 298) || (p.X == 4.3 && p.Y == 449) {
			found++
		}
	}
	if found != 2 {
		t.Errorf("engine points %v lack the two samples the engine answered", eng)
	}
	if _, err := plots.Lag([]plots.Run{{Label: "stall", Result: r}}); err != nil {
		t.Fatal(err)
	}
}
