package bench

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"qbench/results"
)

// A value's native bucket at schema 3: bucket i spans (2^((i-1)/8), 2^(i/8)] seconds.
func TestMetricsNativeIndex(t *testing.T) {
	cases := []struct {
		v    float64
		want int
	}{
		{1, 0}, {1.01, 1}, {2, 8}, {1.5, 5}, {0.5, -8}, {0.001, -79}, {1e-6, -159},
	}
	for _, c := range cases {
		t.Run(strconv.FormatFloat(c.v, 'g', -1, 64), func(t *testing.T) {
			if got := nativeIndex(c.v); got != c.want {
				t.Fatalf("nativeIndex(%v) = %d, want %d", c.v, got, c.want)
			}
		})
	}
}

// An HDR histogram of known values becomes a histogram whose native and classic buckets hold
// them where they belong. Each HDR bucket is placed by its middle: a 0 recorded is in HDR's
// first bucket, 0-511 ns, so at 255.5 ns (native index -175), not in the zero bucket.
func TestMetricsLatencyMetric(t *testing.T) {
	h := results.NewHistogram()
	for _, ns := range []int64{0, 80_000, 80_000, 1_200_000_000, 2_500_000_000} {
		if err := h.RecordValue(ns); err != nil {
			t.Fatal(err)
		}
	}
	desc := prometheus.NewDesc("x_seconds", "x", nil, nil)
	mt, err := latencyMetric(desc, h, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out dto.Metric
	if err := mt.Write(&out); err != nil {
		t.Fatal(err)
	}
	hist := out.GetHistogram()
	if hist.GetSampleCount() != 5 || hist.GetZeroCount() != 0 {
		t.Fatalf("count %d zero %d, want 5 and 0", hist.GetSampleCount(), hist.GetZeroCount())
	}
	// Native: 80 us twice (index ceil(log2(8e-5)*8) = -108), 1.2 s (3), 2.5 s (11). (A value on a
	// bucket's bound may go either side: HDR knows it to 3 significant digits.)
	got := map[int32]int64{}
	idx, run := int32(0), int64(0)
	d := 0
	for _, sp := range hist.GetPositiveSpan() {
		idx += sp.GetOffset()
		for range sp.GetLength() {
			run += hist.GetPositiveDelta()[d]
			d++
			if run != 0 {
				got[idx] = run
			}
			idx++
		}
	}
	if len(got) != 4 || got[-175] != 1 || got[-108] != 2 || got[3] != 1 || got[11] != 1 {
		t.Fatalf("native buckets %v, want -175:1 -108:2 3:1 11:1", got)
	}
	// Classic: le 1e-4 holds 0 and the two 80 us; le 1.6384 adds 1.2 s; le 3.2768 adds 2.5 s.
	cum := map[float64]uint64{}
	for _, b := range hist.GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for ub, want := range map[float64]uint64{2.5e-05: 1, 5e-05: 1, 1e-4: 3, 0.8192: 3, 1.6384: 4, 3.2768: 5, 10: 5} {
		if cum[ub] != want {
			t.Errorf("le=%v: %d, want %d", ub, cum[ub], want)
		}
	}
}
