package results_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

func withLags(lags ...int64) *results.Result {
	r := resultstest.Make(resultstest.Options{Seconds: len(lags), Warmup: 1, Rate: 1000})
	for i := range r.Series {
		r.Series[i].Lag = lags[i]
	}
	return r
}

func TestLagGrowing(t *testing.T) {
	cases := []struct {
		name string
		r    *results.Result
		dur  time.Duration
		want bool
	}{
		{"flat", withLags(0, 5, 5, 6, 5, 5), 0, false},
		{"high but flat", withLags(0, 900, 950, 900, 920, 940), 0, false},
		{"growing", withLags(0, 10, 100, 400, 1200, 3000), 0, true},
		{"small growth is noise", withLags(0, 1, 2, 4, 8, 16), 0, false},
		// Warm-up (second 0) and drain (after the 4 s producing window) are not judged.
		{"drained after producers stopped", withLags(5000, 10, 10, 10, 10, 0), 4 * time.Second, false},
		{"grows until producers stop", withLags(0, 10, 100, 400, 1200, 0), 5 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := results.LagGrowing(c.r, c.dur); got != c.want {
				t.Fatalf("LagGrowing = %v", got)
			}
		})
	}
}

func TestObjective(t *testing.T) {
	gates := mustGates(t, "produce.p99 <= 5ms")
	ok := resultstest.Make(resultstest.Options{Seconds: 4})
	slow := resultstest.Make(resultstest.Options{Seconds: 4, ProduceMedian: 10 * time.Millisecond})
	short := resultstest.Make(resultstest.Options{Seconds: 4})
	short.Summary.ProduceRate = 800
	o := results.Objective{Gates: gates}
	if pass, why := o.Check(ok); !pass {
		t.Fatalf("ok missed: %v", why)
	}
	if pass, why := o.Check(slow); pass || len(why) != 1 {
		t.Fatalf("slow: %v %v", pass, why)
	}
	if pass, why := o.Check(short); pass || why[0] != "achieved 800 of 1000 msg/s" {
		t.Fatalf("short: %v %v", pass, why)
	}
}

func TestIndexRoundTrip(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Seconds: 3})
	pass := false
	ix := &results.Index{Kind: "rate-search", Scenario: "s", Cells: []results.IndexCell{
		results.NewIndexCell("rate=1000", []results.Param{{Key: "rate", Value: "1000"}}, "rate-1000.json", r),
	}, Search: &results.SearchOutcome{Objective: []string{"produce.p99 <= 5ms"}, Best: 1000, FailedAt: 2000}}
	ix.Cells[0].Pass = &pass
	ix.Cells[0].Reasons = []string{"lag growing"}
	p := filepath.Join(t.TempDir(), "index.json")
	if err := results.WriteIndexFile(p, ix); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadIndexFile(p)
	if err != nil || len(back.Cells) != 1 || back.Search.Best != 1000 || *back.Cells[0].Pass {
		t.Fatalf("%v %+v", err, back)
	}
	var b bytes.Buffer
	if err := results.WriteIndexTable(&b, back); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep/index.txt", b.Bytes())
	if got := results.Slug("design=list,rate=2000,persistence.appendfsync=no"); got != "design-list_rate-2000_persistence.appendfsync-no" {
		t.Errorf("slug %q", got)
	}
}
