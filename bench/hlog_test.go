package bench_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// A real run's .hlog adds up to its summary exactly: the untagged intervals hold every value the
// summary counts and no other, for every latency kind, although the warm-up ends mid-second and a
// stall right after it makes messages intended in the warm-up arrive in measured seconds.
func TestHlogOfARunAddsUpToItsSummary(t *testing.T) {
	sc := scenario(t, `
engine: embedded
design: stream
producers: 2
consumers: 2
rate: 2000
duration: 2s
warmup: 950ms
faults:
  - {at: 900ms, kind: stall, duration: 300ms}
`)
	res := run(t, sc)
	mixed := 0
	for _, iv := range res.Series {
		if len(iv.WarmupHistograms) > 0 && !iv.Warmup {
			mixed++
		}
	}
	if mixed == 0 {
		t.Fatal("no measured second holds warm-up values: the test does not exercise the split")
	}
	for _, kind := range results.LatencyKinds {
		var b bytes.Buffer
		if err := results.WriteHlog(&b, res, kind); err != nil {
			t.Fatal(err)
		}
		measured, warm := results.NewHistogram(), results.NewHistogram()
		lr := hdrhistogram.NewHistogramLogReader(&b)
		for {
			h, err := lr.NextIntervalHistogram()
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if h == nil {
				break
			}
			if h.Tag() == results.WarmupTag {
				warm.Merge(h)
			} else {
				measured.Merge(h)
			}
		}
		want, err := res.Histogram(kind)
		if err != nil {
			t.Fatal(err)
		}
		if measured.TotalCount() != res.Summary.Latency[kind].Count || !measured.Equals(want) {
			t.Errorf("%s: untagged intervals hold %d values, the summary %d", kind, measured.TotalCount(), res.Summary.Latency[kind].Count)
		}
		if warm.TotalCount() == 0 {
			t.Errorf("%s: no warm-up values tagged", kind)
		}
	}
}
