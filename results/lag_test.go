package results_test

import (
	"math"
	"testing"
	"time"

	"qbench/results"
)

// A fault's lag peak is read over its own window: two faults that overlap both see the backlog
// between them, the sub-second samples count as much as the per-second readings, and the
// whole run's maxima take both.
func TestLagPeaks(t *testing.T) {
	s := int64(time.Second)
	eng := func(b, p int64) *results.EngineLag { return &results.EngineLag{Backlog: b, Pending: p} }
	series := []results.Interval{
		{StartNs: 0, Lag: 1, EngineLag: eng(1, 0)},
		{StartNs: s, Lag: 6, EngineLag: eng(4, 2)},
		{StartNs: 2 * s, Lag: 10},
		{StartNs: 3 * s, Lag: 3, EngineLag: eng(3, 0)},
	}
	samples := []results.LagSample{
		{AtNs: 1500 * int64(time.Millisecond), Lag: 498, EngineLag: eng(490, 8)},
		{AtNs: 1600 * int64(time.Millisecond), Lag: 200}, // the engine did not answer
		{AtNs: 3500 * int64(time.Millisecond), Lag: 40, EngineLag: eng(0, 41)},
	}
	for _, c := range []struct {
		name          string
		from, to      int64
		wantGen, want int64
	}{
		{"whole run", math.MinInt64, math.MaxInt64, 498, 498},
		{"first of two overlapping faults", s, 2 * s, 498, 498},
		{"second, started inside the first", 1200 * int64(time.Millisecond), 2500 * int64(time.Millisecond), 498, 498},
		{"after the burst: per-second only", 2200 * int64(time.Millisecond), 2900 * int64(time.Millisecond), 10, 0},
		{"the tail's sample", 3100 * int64(time.Millisecond), 4 * s, 40, 41},
		{"before anything", -2 * s, -s - 1, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			gen, e := results.LagPeaks(series, samples, c.from, c.to)
			if gen != c.wantGen || e != c.want {
				t.Errorf("LagPeaks = %d, %d; want %d, %d", gen, e, c.wantGen, c.want)
			}
		})
	}
	if (*results.EngineLag)(nil).Total() != 0 {
		t.Error("a missing engine reading totals 0")
	}
}
