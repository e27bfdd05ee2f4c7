package bench

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"qbench/results"
)

// The cost of observing one latency per message, against the HDR record the hot path already
// makes, to decide where the live histograms are fed from (metrics.go):
// go test ./bench -run '^$' -bench 'BenchmarkMetricsCost' -benchtime 2000000x (the last two
// with -benchtime 200x)
func BenchmarkMetricsCost(b *testing.B) {
	classic := prometheus.ExponentialBuckets(50e-6, 2, 18)
	b.Run("hdr-record", func(b *testing.B) {
		h := results.NewHistogram()
		for i := 0; b.Loop(); i++ {
			_ = h.RecordValue(int64(100_000 + i%1_000_000))
		}
	})
	for _, c := range []struct {
		name   string
		native bool
	}{{"prom-classic", false}, {"prom-native+classic", true}} {
		opts := prometheus.HistogramOpts{Name: "x_seconds", Help: "x", Buckets: classic}
		if c.native {
			opts.NativeHistogramBucketFactor = 1.1
			opts.NativeHistogramMaxBucketNumber = 160
		}
		b.Run(c.name, func(b *testing.B) {
			h := prometheus.NewHistogram(opts)
			for i := 0; b.Loop(); i++ {
				h.Observe(float64(100_000+i%1_000_000) / 1e9)
			}
		})
		b.Run(c.name+"-parallel", func(b *testing.B) {
			h := prometheus.NewHistogram(opts)
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					h.Observe(float64(100_000+i%1_000_000) / 1e9)
					i++
				}
			})
		})
	}
	// What the view adds to the hot path: one atomic add per batch sent, from every producer.
	b.Run("note-sending-parallel", func(b *testing.B) {
		l := &liveRun{}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.noteSending(1)
			}
		})
	})
	// What the view costs instead, off the hot path: once a second per kind, merging the
	// interval's histogram into the run's running one; at each scrape, turning a histogram of a
	// million values (spread over 100 us - 1.1 s) into a native and classic histogram.
	full := results.NewHistogram()
	for i := range 1_000_000 {
		_ = full.RecordValue(int64(100_000 + i*1_000))
	}
	b.Run("harvest-merge-1M", func(b *testing.B) {
		into := results.NewHistogram()
		for b.Loop() {
			into.Merge(full)
		}
	})
	b.Run("scrape-1M", func(b *testing.B) {
		desc := prometheus.NewDesc("x_seconds", "x", nil, nil)
		for b.Loop() {
			if _, err := latencyMetric(desc, full, time.Time{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
