package server

import (
	"bytes"
	"runtime/metrics"
	"strings"
	"testing"
)

func TestHistSummary(t *testing.T) {
	h := &metrics.Float64Histogram{
		Buckets: []float64{0, 1e-5, 1e-4, 1e-3, 1e-2},
		Counts:  []uint64{90, 8, 1, 1},
	}
	got := histSummary(h)
	want := "n=100 p50<=10µs p99<=1ms p99.9<=10ms >=100us:2 >=1ms:1"
	if got != want {
		t.Errorf("histSummary = %q, want %q", got, want)
	}
}

func TestWriteRuntimeStats(t *testing.T) {
	var b bytes.Buffer
	writeRuntimeStats(&b)
	for _, name := range []string{"/sched/latencies:seconds n=", "/gc/pauses:seconds n=", "/gc/cycles/total:gc-cycles ", "/gc/heap/allocs:bytes "} {
		if !strings.Contains(b.String(), "runtime "+name) {
			t.Errorf("no %q in:\n%s", name, b.String())
		}
	}
}
