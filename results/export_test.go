package results_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
	"qbench/results/resultstest"
)

// The .hlog is read back by hdrhistogram-go's own log reader into the very histograms the result
// holds, second by second, with their time stamps.
func TestHlogReadsBackIdentically(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Seconds: 6, Warmup: 1, StallAt: 3 * time.Second, StallFor: 500 * time.Millisecond})
	r.Series[2].Histograms["e2e"] = "" // a second without deliveries is written as an empty histogram
	for _, kind := range results.LatencyKinds {
		t.Run(kind, func(t *testing.T) {
			var b bytes.Buffer
			if err := results.WriteHlog(&b, r, kind); err != nil {
				t.Fatal(err)
			}
			want, err := results.IntervalHistograms(r, kind)
			if err != nil {
				t.Fatal(err)
			}
			// A second mixing warm-up and measured values is two intervals (tagged and not) with
			// the same time stamps; together they are the second's histogram.
			rd := hdrhistogram.NewHistogramLogReader(&b)
			got := map[int64]*hdrhistogram.Histogram{}
			for {
				h, err := rd.NextIntervalHistogram()
				if err != nil && !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				if h == nil {
					break
				}
				if d := h.EndTimeMs() - h.StartTimeMs(); d != 1000 {
					t.Errorf("interval at %d ms lasts %d ms", h.StartTimeMs(), d)
				}
				if got[h.StartTimeMs()] == nil {
					got[h.StartTimeMs()] = results.NewHistogram()
				}
				got[h.StartTimeMs()].Merge(h)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d seconds, want %d", len(got), len(want))
			}
			for i := range want {
				// The reader adds the log's StartTime to the relative time stamps.
				h := got[resultstest.Epoch.UnixMilli()+int64(i)*1000]
				if h == nil {
					t.Fatalf("no interval for second %d", i)
				}
				if !h.Equals(want[i]) {
					t.Errorf("second %d: read back %d values (max %d), want %d (max %d)", i, h.TotalCount(), h.Max(), want[i].TotalCount(), want[i].Max())
				}
			}
		})
	}
}

func TestExportGolden(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Name: "quickstart", Seconds: 5, Warmup: 1, StallAt: 3 * time.Second, StallFor: 300 * time.Millisecond, Lost: 2})
	var hgrm, hlog, series, summary bytes.Buffer
	if err := results.WriteHgrm(&hgrm, r, "produce"); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteHlog(&hlog, r, "produce"); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteSeriesCSV(&series, r); err != nil {
		t.Fatal(err)
	}
	other := resultstest.Make(resultstest.Options{Name: "quickstart", Seed: 2, Seconds: 5, Warmup: 1})
	if err := results.WriteSummaryCSV(&summary, []string{"stall", "plain"}, []*results.Result{r, other}); err != nil {
		t.Fatal(err)
	}
	golden(t, "export/produce.hgrm", hgrm.Bytes())
	golden(t, "export/produce.hlog", hlog.Bytes())
	golden(t, "export/series.csv", series.Bytes())
	golden(t, "export/summary.csv", summary.Bytes())

	// Every CSV row has as many fields as the header.
	for _, b := range []*bytes.Buffer{&series, &summary} {
		rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%v %d rows", err, len(rows))
		}
	}
	if !strings.Contains(hgrm.String(), "#[Max     =") {
		t.Fatalf("hgrm lacks HdrHistogram's footer:\n%s", hgrm.String())
	}
}

func TestMergeMachinesIsExact(t *testing.T) {
	a := resultstest.Make(resultstest.Options{Seed: 1, Seconds: 4, Lost: 2})
	b := resultstest.Make(resultstest.Options{Seed: 2, Seconds: 5, Duplicates: 3, StallAt: 2 * time.Second, StallFor: 200 * time.Millisecond})
	a.Summary.Ledger.Queued, b.Summary.Ledger.Queued = 5, 7
	// b's scenario has a fault a's has not, hence Force.
	m, err := results.Merge([]*results.Result{a, b}, results.MergeOptions{Mode: results.MergeMachines, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range results.LatencyKinds {
		ha, _ := a.Histogram(k)
		hb, _ := b.Histogram(k)
		want := results.NewHistogram()
		want.Merge(ha)
		want.Merge(hb)
		got, err := m.Histogram(k)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equals(want) {
			t.Errorf("%s: merged histogram differs from the sum", k)
		}
		if m.Summary.Latency[k] != results.Summarise(want) {
			t.Errorf("%s: summary not read from the merged histogram", k)
		}
	}
	l := m.Summary.Ledger
	if l.Sent != a.Summary.Ledger.Sent+b.Summary.Ledger.Sent || l.Lost != 2 || l.Queued != 12 || l.Duplicates != 3 {
		t.Errorf("ledger %+v", l)
	}
	if m.Summary.ProduceRate != a.Summary.ProduceRate+b.Summary.ProduceRate {
		t.Errorf("rates of parallel load generators add: %v", m.Summary.ProduceRate)
	}
	if s := m.Summary; s.ProduceBytesRate != a.Summary.ProduceBytesRate+b.Summary.ProduceBytesRate || s.DeliverBytesRate != a.Summary.DeliverBytesRate+b.Summary.DeliverBytesRate {
		t.Errorf("byte rates of parallel load generators add: %v, %v", s.ProduceBytesRate, s.DeliverBytesRate)
	}
	if len(m.Series) != 5 || m.Series[0].Acked != 2000 || m.Series[4].Acked != 1000 {
		t.Errorf("series %d seconds, first %d acked, last %d", len(m.Series), m.Series[0].Acked, m.Series[4].Acked)
	}
	h0, _ := results.IntervalHistograms(m, "produce")
	if h0[0].TotalCount() != 2000 || m.Series[0].Produce.Count != 2000 {
		t.Errorf("interval histograms not merged: %d", h0[0].TotalCount())
	}
	if m.Merged == nil || len(m.Merged.Sources) != 2 {
		t.Errorf("merged sources %+v", m.Merged)
	}
}

func TestMergeRepetitionsKeepsEach(t *testing.T) {
	var rs []*results.Result
	for i := uint64(1); i <= 3; i++ {
		rs = append(rs, resultstest.Make(resultstest.Options{Seed: i, Seconds: 3}))
	}
	m, err := results.Merge(rs, results.MergeOptions{Mode: results.MergeRepetitions})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Repetitions) != 3 || m.Summary.MeasuredSeconds != 9 || m.Summary.ProduceRate != 1000 {
		t.Fatalf("%d repetitions, %v s, %v msg/s", len(m.Repetitions), m.Summary.MeasuredSeconds, m.Summary.ProduceRate)
	}
	if s := m.Summary; s.ProduceBytesRate != 256*1000 || s.DeliverBytesRate != 256*s.DeliverRate {
		t.Errorf("repetitions' byte rates %v, %v; want 256 B x their message rates", s.ProduceBytesRate, s.DeliverBytesRate)
	}
	// Merging merged repetitions flattens them.
	m2, err := results.Merge([]*results.Result{m, rs[0]}, results.MergeOptions{Mode: results.MergeRepetitions})
	if err != nil || len(m2.Repetitions) != 4 {
		t.Fatalf("%v %d", err, len(m2.Repetitions))
	}
	p99 := results.Metrics()[2]
	if p99.Name != "produce.p99" || results.Spread(m, p99) <= 0 {
		t.Fatalf("no spread for %s", p99.Name)
	}
}

func TestMergeRefusesDifferentScenarios(t *testing.T) {
	a := resultstest.Make(resultstest.Options{Name: "a"})
	b := resultstest.Make(resultstest.Options{Name: "b"})
	if _, err := results.Merge([]*results.Result{a, b}, results.MergeOptions{}); !errors.Is(err, results.ErrDifferentScenarios) {
		t.Fatalf("err %v", err)
	}
	if _, err := results.Merge([]*results.Result{a, b}, results.MergeOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// Seeds may differ between repetitions.
	c := resultstest.Make(resultstest.Options{Name: "a", Seed: 9})
	if _, err := results.Merge([]*results.Result{a, c}, results.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The .hlog's untagged intervals add up to the summary's histogram exactly (count, every
// bucket), and its tagged ones to the warm-up; the start time keeps its milliseconds.
func TestHlogUntaggedIntervalsAddUpToTheSummary(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Seconds: 6, Warmup: 2, StallAt: 3 * time.Second, StallFor: 200 * time.Millisecond})
	r.StartedAt = r.StartedAt.Add(123 * time.Millisecond)
	for _, kind := range results.LatencyKinds {
		var b bytes.Buffer
		if err := results.WriteHlog(&b, r, kind); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "#[StartTime: 1767225600.123 (seconds since epoch), 2026-01-01T00:00:00.123Z]") {
			t.Fatalf("start time without its milliseconds:\n%.400s", b.String())
		}
		measured, warm := hlogSums(t, b.String())
		want, err := r.Histogram(kind)
		if err != nil {
			t.Fatal(err)
		}
		if measured.TotalCount() != want.TotalCount() || !measured.Equals(want) {
			t.Errorf("%s: untagged intervals total %d, summary %d", kind, measured.TotalCount(), want.TotalCount())
		}
		if warm.TotalCount() != r.Series[0].Acked+r.Series[1].Acked {
			t.Errorf("%s: warm-up intervals total %d, want the two warm-up seconds", kind, warm.TotalCount())
		}
	}
}

// hlogSums reads an .hlog back with HdrHistogram's Go log reader and adds its untagged and its
// warm-up intervals apart.
func hlogSums(t *testing.T, log string) (measured, warm *hdrhistogram.Histogram) {
	t.Helper()
	measured, warm = results.NewHistogram(), results.NewHistogram()
	lr := hdrhistogram.NewHistogramLogReader(strings.NewReader(log))
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			return measured, warm
		}
		switch h.Tag() {
		case "":
			measured.Merge(h)
		case results.WarmupTag:
			warm.Merge(h)
		default:
			t.Fatalf("unexpected tag %q", h.Tag())
		}
	}
}

// A merged result's .hlog (machines side by side) still adds up to its summary exactly: the
// warm-up parts of each second merge like the seconds themselves.
func TestHlogOfAMergedResultAddsUp(t *testing.T) {
	a := resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 5, Warmup: 2})
	b := resultstest.Make(resultstest.Options{Name: "q", Seed: 2, Seconds: 5, Warmup: 2})
	m, err := results.Merge([]*results.Result{a, b}, results.MergeOptions{Mode: results.MergeMachines})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := results.WriteHlog(&buf, m, "e2e"); err != nil {
		t.Fatal(err)
	}
	measured, warm := hlogSums(t, buf.String())
	want, _ := m.Histogram("e2e")
	if !measured.Equals(want) || warm.TotalCount() != 2*(a.Series[0].Acked+a.Series[1].Acked) {
		t.Fatalf("merged .hlog: untagged %d (summary %d), warm-up %d", measured.TotalCount(), want.TotalCount(), warm.TotalCount())
	}
}
