package main

import (
	"fmt"
	"io"
	"runtime/metrics"
	"time"
)

// schedLatencies is the runtime's histogram of goroutine scheduling latencies (the time a
// goroutine spends runnable before it runs), read at the start: report prints what the run added.
type schedLatencies struct{ before *metrics.Float64Histogram }

const schedLatencyMetric = "/sched/latencies:seconds"

func readSched() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatencyMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

func startSchedLatencies() *schedLatencies { return &schedLatencies{before: readSched()} }

// report writes the run's count of goroutine wake-ups and their latency quantiles (each the upper
// bound of the histogram bucket it falls in) and the count over 50, 100 and 250 us.
func (s *schedLatencies) report(w io.Writer) {
	after := readSched()
	if s.before == nil || after == nil {
		return
	}
	counts := make([]uint64, len(after.Counts))
	var total uint64
	for i := range counts {
		counts[i] = after.Counts[i] - s.before.Counts[i]
		total += counts[i]
	}
	if total == 0 {
		return
	}
	// Buckets[i], Buckets[i+1] bound Counts[i].
	quantile := func(q float64) time.Duration {
		want := uint64(q * float64(total))
		var seen uint64
		for i, n := range counts {
			seen += n
			if seen > want {
				return time.Duration(after.Buckets[i+1] * 1e9)
			}
		}
		return -1
	}
	over := func(d time.Duration) uint64 {
		var n uint64
		for i, c := range counts {
			if after.Buckets[i] >= d.Seconds() {
				n += c
			}
		}
		return n
	}
	fmt.Fprintf(w, "qbench: %s: %d wake-ups, p50 <= %v, p90 <= %v, p99 <= %v, p99.9 <= %v; >= 50us %d, >= 100us %d, >= 250us %d\n",
		schedLatencyMetric, total, quantile(0.5), quantile(0.9), quantile(0.99), quantile(0.999),
		over(50*time.Microsecond), over(100*time.Microsecond), over(250*time.Microsecond))
}
