package bench_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"qbench/bench"
	"qbench/engines/redisq"
	"qbench/results"
)

// The live view of an embedded run with a fault, in a matrix cell: every metric's name and
// labels, the counters equal to the result's ledger at the end, the trust flags the result's,
// the fault window counted and closed, and each latency histogram holding as many values as the
// run's per-second series (native buckets at schema 3 and classic ones, adding up alike).
func TestMetricsExposition(t *testing.T) {
	sc := scenario(t, "engine: embedded\ndesign: stream\nrate: 400\nduration: 2s\nwarmup: 500ms\nseed: 7\n"+
		"faults:\n  - {at: 1s, kind: consumer-pause, duration: 300ms}\n")
	m := bench.NewMetrics()
	ctx := context.Background()
	// Scraped all the while, as Prometheus would (under -race this is what finds a read of the
	// run's state that is not safe).
	scraping, scrapes := make(chan struct{}), make(chan int)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond) // a scraper's pace, not a busy loop
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-scraping:
				scrapes <- n
				return
			case <-tick.C:
			}
			if _, err := m.Registry().Gather(); err != nil {
				t.Errorf("gather during the run: %v", err)
			}
			n++
		}
	}()
	res, err := bench.Run(ctx, ctx, sc, bench.Options{RunID: "metrics-test", Metrics: m, Cell: "rate=400", Logf: t.Logf})
	close(scraping)
	if n := <-scrapes; n == 0 {
		t.Error("never scraped during the run")
	}
	if err != nil {
		t.Fatal(err)
	}
	reg := m.Registry()
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	var names []string
	for _, f := range fams {
		byName[f.GetName()] = f
		names = append(names, f.GetName())
	}
	sort.Strings(names)
	want := []string{"qbench_acked_total", "qbench_delivered_total", "qbench_duplicates_total", "qbench_e2e_latency_seconds",
		"qbench_failed_total", "qbench_fault_active", "qbench_faults_total", "qbench_in_flight_messages", "qbench_lag_messages",
		"qbench_lost_messages", "qbench_produce_latency_seconds", "qbench_queued_messages", "qbench_run_finished",
		"qbench_send_delay_seconds", "qbench_sent_total", "qbench_trust_flag", "qbench_warmup"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("metric names\n got %v\nwant %v", names, want)
	}
	base := map[string]string{"run": "metrics-test", "segment": "", "engine": "embedded", "design": "stream", "cell": "rate=400"}
	extra := map[string][]string{"qbench_fault_active": {"kind", "target"}, "qbench_faults_total": {"kind", "target"}, "qbench_trust_flag": {"code", "severity"}}
	value := map[string]float64{}
	for _, name := range names {
		for _, mt := range byName[name].GetMetric() {
			got := map[string]string{}
			for _, lp := range mt.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range base {
				if got[k] != v {
					t.Errorf("%s: label %s=%q, want %q", name, k, got[k], v)
				}
			}
			if len(got) != len(base)+len(extra[name]) {
				t.Errorf("%s: labels %v, want %v plus %v", name, got, base, extra[name])
			}
			key := name
			for _, e := range extra[name] {
				key += "|" + got[e]
			}
			switch {
			case mt.Counter != nil:
				value[key] = mt.Counter.GetValue()
			case mt.Gauge != nil:
				value[key] = mt.Gauge.GetValue()
			}
		}
	}
	l := res.Summary.Ledger
	t.Run("counters", func(t *testing.T) {
		for _, c := range []struct {
			name string
			want int64
		}{
			{"qbench_sent_total", l.Sent}, {"qbench_acked_total", l.Acked}, {"qbench_failed_total", l.Failed},
			{"qbench_delivered_total", l.Delivered}, {"qbench_duplicates_total", l.Duplicates},
			{"qbench_lost_messages", l.Lost}, {"qbench_queued_messages", l.Queued},
			{"qbench_in_flight_messages", 0}, {"qbench_warmup", 0}, {"qbench_run_finished", 1},
			{"qbench_faults_total|consumer-pause|consumer 0", 1}, {"qbench_fault_active|consumer-pause|consumer 0", 0},
		} {
			if got := value[c.name]; got != float64(c.want) {
				t.Errorf("%s = %v, want %d", c.name, got, c.want)
			}
		}
		if l.Delivered == 0 {
			t.Fatal("nothing delivered: the comparison proves nothing")
		}
	})
	t.Run("trust flags", func(t *testing.T) {
		var got, wantFlags []string
		for k := range value {
			if rest, ok := strings.CutPrefix(k, "qbench_trust_flag|"); ok {
				got = append(got, rest)
			}
		}
		for _, f := range results.Assess(res).Flags {
			wantFlags = append(wantFlags, f.Code+"|"+string(f.Severity))
		}
		sort.Strings(got)
		sort.Strings(wantFlags)
		if strings.Join(got, " ") != strings.Join(wantFlags, " ") {
			t.Fatalf("trust flags %v, want %v", got, wantFlags)
		}
	})
	t.Run("latency histograms", func(t *testing.T) {
		for _, c := range []struct{ name, kind string }{
			{"qbench_produce_latency_seconds", bench.KindProduce},
			{"qbench_send_delay_seconds", bench.KindSendDelay},
			{"qbench_e2e_latency_seconds", bench.KindE2E},
		} {
			var want int64
			for _, iv := range res.Series {
				switch c.kind {
				case bench.KindProduce:
					want += iv.Produce.Count
				case bench.KindSendDelay:
					want += iv.SendDelay.Count
				case bench.KindE2E:
					want += iv.E2E.Count
				}
			}
			h := byName[c.name].GetMetric()[0].GetHistogram()
			if want == 0 || h.GetSampleCount() != uint64(want) {
				t.Errorf("%s: count %d, want the series' %d (> 0)", c.name, h.GetSampleCount(), want)
			}
			if h.GetSchema() != 3 {
				t.Errorf("%s: schema %d, want 3", c.name, h.GetSchema())
			}
			native := int64(h.GetZeroCount())
			var run int64
			for _, d := range h.GetPositiveDelta() {
				run += d
				native += run
			}
			classic := h.GetBucket()
			if native != want || len(classic) == 0 || classic[len(classic)-1].GetCumulativeCount() != uint64(want) {
				t.Errorf("%s: native buckets hold %d, classic %d; want %d in each", c.name, native, classic[len(classic)-1].GetCumulativeCount(), want)
			}
			if s := h.GetSampleSum(); s <= 0 {
				t.Errorf("%s: sum %v, want > 0", c.name, s)
			}
		}
	})
}

// Without a view a run reports to nothing; the view of no run exposes only its collector's
// nothing: an empty registry is valid.
func TestMetricsEmpty(t *testing.T) {
	m := bench.NewMetrics()
	n, err := testutil.GatherAndCount(m.Registry())
	if err != nil || n != 0 {
		t.Fatalf("an unused view gathers %d series (%v), want 0", n, err)
	}
}

// Two segments of one run report to one view (as two pods would to one Prometheus): each its
// own series, labelled by segment, whose counters equal its result's; the sum over segments
// equals the merged run's; neither says lost (a segment does not know it), and each carries the
// partial flag.
func TestMetricsSegments(t *testing.T) {
	needTarget(t, "redis")
	srv, err := redisq.StartRedis(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	yaml := fmt.Sprintf("name: metrics-segments\nengine: redis-url\naddress: %s\ndesign: stream\nproducers: 2\nconsumers: 2\nrate: 600\nduration: 1500ms\nwarmup: 0s\nseed: 4\n", srv.Addr())
	m := bench.NewMetrics()
	ctx := context.Background()
	start := time.Now().Add(2 * time.Second)
	segs := make([]*results.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range segs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			segs[i], errs[i] = bench.Run(ctx, ctx, scenario(t, yaml), bench.Options{Logf: t.Logf, Metrics: m,
				Segment: &bench.SegmentOptions{Index: i, Count: 2, StartAt: start}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
	}
	merged, err := results.MergeSegments(segs, bench.JoinSegmentLedgers)
	if err != nil {
		t.Fatal(err)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	// name|segment (|code for trust flags) -> value
	value := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			key := f.GetName()
			var code string
			for _, lp := range mt.GetLabel() {
				switch lp.GetName() {
				case "segment":
					key += "|" + lp.GetValue()
				case "run":
					if lp.GetValue() != segs[0].RunID {
						t.Errorf("%s: run %q, want %q", f.GetName(), lp.GetValue(), segs[0].RunID)
					}
				case "code":
					code = lp.GetValue()
				}
			}
			if code != "" {
				key += "|" + code
			}
			if mt.Counter != nil {
				value[key] = mt.Counter.GetValue()
			} else if mt.Gauge != nil {
				value[key] = mt.Gauge.GetValue()
			}
		}
	}
	for _, name := range []string{"qbench_sent_total", "qbench_acked_total", "qbench_delivered_total", "qbench_duplicates_total"} {
		var sum float64
		for i, res := range segs {
			l := res.Summary.Ledger
			want := map[string]int64{"qbench_sent_total": l.Sent, "qbench_acked_total": l.Acked, "qbench_delivered_total": l.Delivered, "qbench_duplicates_total": l.Duplicates}[name]
			got := value[fmt.Sprintf("%s|%d/2", name, i)]
			if got != float64(want) {
				t.Errorf("%s segment %d/2 = %v, its result %d", name, i, got, want)
			}
			sum += got
		}
		l := merged.Summary.Ledger
		if want := map[string]int64{"qbench_sent_total": l.Sent, "qbench_acked_total": l.Acked, "qbench_delivered_total": l.Delivered, "qbench_duplicates_total": l.Duplicates}[name]; sum != float64(want) || want == 0 && name != "qbench_duplicates_total" {
			t.Errorf("%s summed over segments = %v, the merged run %d", name, sum, want)
		}
	}
	for i := range segs {
		if _, ok := value[fmt.Sprintf("qbench_lost_messages|%d/2", i)]; ok {
			t.Errorf("segment %d/2 exposes lost, which only the merge knows", i)
		}
		if value[fmt.Sprintf("qbench_trust_flag|%d/2|%s", i, results.CodePartial)] != 1 {
			t.Errorf("segment %d/2 has no %s trust flag", i, results.CodePartial)
		}
	}
}
