package plots_test

import (
	"math"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// Latency over time has one point per bin with messages, bins 100 ms wide for a run with faults
// and 1 s without, each point at its bin's middle. Binned by intended send time, the messages
// sent into a stall stand in the stall's bins with the stall in their latency; binned by
// completion, those bins are empty (nothing completed during the stall) and the latency shows
// at the stall's end.
func TestLatencyBins(t *testing.T) {
	stallAt, stallFor := 4*time.Second, 700*time.Millisecond
	faulted := resultstest.Make(resultstest.Options{Seed: 1, Seconds: 8, Warmup: 1, StallAt: stallAt, StallFor: stallFor})
	calm := resultstest.Make(resultstest.Options{Seed: 2, Seconds: 8, Warmup: 1})
	old := resultstest.Make(resultstest.Options{Seed: 3, Seconds: 8, Warmup: 1, StallAt: stallAt, StallFor: stallFor})
	old.Bins = nil // a result written before the bins existed
	inStall := func(x float64) bool { return x > stallAt.Seconds() && x < (stallAt+stallFor).Seconds() }
	cases := []struct {
		name       string
		r          *results.Result
		kind, by   string
		width      time.Duration
		binned     bool
		points     int // -1: not checked exactly
		stallPts   int // points whose middle is inside the stall; -1: not checked
		stallP99At time.Duration
	}{
		{"faulted by intended", faulted, "produce", results.BinByIntended, 100 * time.Millisecond, true, 80, 7, 40 * time.Millisecond},
		{"faulted e2e by intended", faulted, "e2e", results.BinByIntended, 100 * time.Millisecond, true, 80, 7, 40 * time.Millisecond},
		{"faulted by completion", faulted, "produce", results.BinByCompleted, 100 * time.Millisecond, true, -1, 0, 0},
		{"faulted default clock", faulted, "produce", "", 100 * time.Millisecond, true, -1, 0, 0},
		{"calm by intended", calm, "produce", results.BinByIntended, time.Second, true, 8, -1, 0},
		{"send delay uses the series", faulted, "send_delay", results.BinByIntended, time.Second, false, 8, -1, 0},
		{"old result uses the series", old, "produce", results.BinByIntended, time.Second, false, 8, -1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pts, width, binned := plots.LatencyPoints(c.r, c.kind, c.by)
			if width != c.width || binned != c.binned {
				t.Fatalf("width %v binned %v, want %v %v", width, binned, c.width, c.binned)
			}
			if c.points >= 0 && len(pts) != c.points {
				t.Errorf("%d points, want %d", len(pts), c.points)
			}
			stall := 0
			for i, p := range pts {
				// Each point is the middle of its bin.
				if k := (p.X - width.Seconds()/2) / width.Seconds(); c.binned && math.Abs(k-math.Round(k)) > 1e-6 {
					t.Fatalf("point %d at %.4fs is not a bin's middle", i, p.X)
				}
				if i > 0 && p.X <= pts[i-1].X {
					t.Fatalf("points out of order at %d", i)
				}
				if inStall(p.X) {
					stall++
					if p.Latency.P99 < int64(c.stallP99At) {
						t.Errorf("bin at %.2fs inside the stall has p99 %v, want at least %v", p.X, time.Duration(p.Latency.P99), c.stallP99At)
					}
				}
			}
			if c.stallPts >= 0 && stall != c.stallPts {
				t.Errorf("%d points inside the stall, want %d", stall, c.stallPts)
			}
		})
	}
}

func TestBinWidth(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		faults bool
		want   time.Duration
	}{
		{time.Minute, true, 100 * time.Millisecond},
		{time.Minute, false, time.Second},
		{10 * time.Minute, true, 200 * time.Millisecond}, // 3000 bins at most
		{time.Hour, true, 1200 * time.Millisecond},
		{time.Hour, false, 1200 * time.Millisecond},
		{5 * time.Hour, false, 6 * time.Second},
	} {
		if got := results.BinWidth(c.d, c.faults); got != c.want {
			t.Errorf("BinWidth(%v, %v) = %v, want %v", c.d, c.faults, got, c.want)
		}
	}
}

// The latency chart's title says the clock and the bins' width; by intended send time it has
// its own file name.
func TestLatencyChartNamesItsBins(t *testing.T) {
	runs := []plots.Run{{Label: "f", Result: resultstest.Make(resultstest.Options{Seed: 1, Seconds: 4, StallAt: time.Second, StallFor: 300 * time.Millisecond})}}
	for _, c := range []struct{ by, name, title string }{
		{results.BinByCompleted, "latency-e2e", "e2e latency over time, 100 ms bins by completion (p50 dashed, p99 solid, max dotted)"},
		{results.BinByIntended, "latency-intended-e2e", "e2e latency over time, 100 ms bins by intended send time (p50 dashed, p99 solid, max dotted)"},
	} {
		ch, err := plots.LatencyOverTime(runs, "e2e", c.by)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Name != c.name || ch.Title != c.title {
			t.Errorf("by %s: %q %q, want %q %q", c.by, ch.Name, ch.Title, c.name, c.title)
		}
	}
}

// Throughput of a run with faults comes from its 100 ms completion bins: a point every 100 ms,
// zero while the stall held every acknowledgement back, the offered rate elsewhere; a run
// without faults has no sub-second bins and keeps the per-second series.
func TestBinnedThroughput(t *testing.T) {
	stallAt, stallFor := 4*time.Second, 700*time.Millisecond
	r := resultstest.Make(resultstest.Options{Seed: 1, Seconds: 8, Warmup: 1, StallAt: stallAt, StallFor: stallFor})
	acked, delivered, ok := plots.BinnedRates(r, 1)
	if !ok {
		t.Fatal("a faulted run has sub-second bins")
	}
	if len(acked) != len(delivered) || len(acked) < 79 {
		t.Fatalf("%d acked and %d delivered points, want the same, about 80", len(acked), len(delivered))
	}
	for i, p := range acked {
		if i > 0 && math.Abs(p.X-acked[i-1].X-0.1) > 1e-9 && i != len(acked)-1 {
			t.Fatalf("points %d and %d are %.3fs apart, want 0.1s", i-1, i, p.X-acked[i-1].X)
		}
		inside := p.X > stallAt.Seconds()+0.1 && p.X < (stallAt+stallFor).Seconds()
		switch {
		case inside && p.Y != 0:
			t.Errorf("at %.2fs inside the stall: %.0f acks/s, want 0", p.X, p.Y)
		case !inside && p.X > 1 && p.X < stallAt.Seconds() && math.Abs(p.Y-1000) > 100:
			t.Errorf("at %.2fs: %.0f acks/s, want about 1000", p.X, p.Y)
		}
	}
	if _, _, ok := plots.BinnedRates(resultstest.Make(resultstest.Options{Seed: 2, Seconds: 8}), 1); ok {
		t.Error("a run without faults has 1 s bins and keeps the per-second series")
	}
}
