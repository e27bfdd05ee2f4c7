package bench

import (
	"context"
	"fmt"
	"testing"
)

// The search's schedule against a system whose capacity is known, without running anything.
func TestSearchRate(t *testing.T) {
	cases := []struct {
		name         string
		capacity     float64
		lim          SearchLimits
		best, failed float64
		steps        string
	}{
		{"bisects to within 5%", 5000, SearchLimits{Low: 1000}, 5000, 5250,
			"1000+ 2000+ 4000+ 8000- 6000- 5000+ 5500- 5250-"},
		{"uneven capacity", 3300, SearchLimits{Low: 1000}, 3250, 3375,
			"1000+ 2000+ 4000- 3000+ 3500- 3250+ 3375-"},
		{"ceiling passes", 1e9, SearchLimits{Low: 1000, High: 5000}, 5000, 0,
			"1000+ 2000+ 4000+ 5000+"},
		{"lowest fails", 500, SearchLimits{Low: 1000}, 0, 1000, "1000-"},
		{"run budget", 5000, SearchLimits{Low: 1000, MaxRuns: 5}, 4000, 6000,
			"1000+ 2000+ 4000+ 8000- 6000-"},
		{"coarse precision", 5000, SearchLimits{Low: 1000, Precision: 0.5}, 4000, 6000,
			"1000+ 2000+ 4000+ 8000- 6000-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probe := func(_ context.Context, rate float64) (bool, error) { return rate <= c.capacity, nil }
			best, failed, steps, err := SearchRate(context.Background(), probe, c.lim)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for i, s := range steps {
				if i > 0 {
					got += " "
				}
				mark := "-"
				if s.Pass {
					mark = "+"
				}
				got += fmt.Sprintf("%.0f%s", s.Rate, mark)
			}
			if best != c.best || failed != c.failed || got != c.steps {
				t.Fatalf("best %v failed %v steps %s; want %v %v %s", best, failed, got, c.best, c.failed, c.steps)
			}
		})
	}
}

func TestSearchRateLimits(t *testing.T) {
	probe := func(context.Context, float64) (bool, error) { return true, nil }
	if _, _, _, err := SearchRate(context.Background(), probe, SearchLimits{Low: 0}); err == nil {
		t.Error("a zero lowest rate was accepted")
	}
	if _, _, _, err := SearchRate(context.Background(), probe, SearchLimits{Low: 10, High: 5}); err == nil {
		t.Error("a ceiling below the floor was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := SearchRate(ctx, probe, SearchLimits{Low: 10}); err != ErrSearchStopped {
		t.Errorf("cancelled search: %v", err)
	}
}
