package server

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// Diagnostics of a server process (the "server" target's child, cmd/qserver), read at exit,
// for measuring the server's latency tail on a busy machine by counts rather than timings:
// QBENCH_SERVER_RUNTIME_STATS=1 prints the Go scheduler's latencies (how long goroutines waited
// runnable), GC pauses and cycles and bytes allocated to stderr; QBENCH_SERVER_ALLOCPROFILE=FILE
// writes the allocation profile (go tool pprof -sample_index=alloc_space);
// QBENCH_SERVER_TRACE=FILE writes an execution trace of the process from start to exit (go tool
// trace: what the event loop and the blocked clients' goroutines did in a slow second).
func writeExitDiagnostics(stderr io.Writer) {
	if path := os.Getenv("QBENCH_SERVER_ALLOCPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	if os.Getenv("QBENCH_SERVER_RUNTIME_STATS") == "1" {
		writeRuntimeStats(stderr)
	}
}

func writeRuntimeStats(w io.Writer) {
	ss := []metrics.Sample{
		{Name: "/sched/latencies:seconds"},
		{Name: "/gc/pauses:seconds"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/allocs:objects"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"}, // the collector's CPU (an estimate: the runtime's own accounting)
		{Name: "/cpu/classes/total:cpu-seconds"},
	}
	metrics.Read(ss)
	for _, s := range ss {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			fmt.Fprintf(w, "runtime %s %d\n", s.Name, s.Value.Uint64())
		case metrics.KindFloat64:
			fmt.Fprintf(w, "runtime %s %.3f\n", s.Name, s.Value.Float64())
		case metrics.KindFloat64Histogram:
			fmt.Fprintf(w, "runtime %s %s\n", s.Name, histSummary(s.Value.Float64Histogram()))
		}
	}
}

// histSummary gives a histogram's count, upper bounds of the buckets holding p50/p99/p99.9,
// and how many samples lie in buckets from 100 us and from 1 ms on.
func histSummary(h *metrics.Float64Histogram) string {
	var n, over100us, over1ms uint64
	for i, c := range h.Counts {
		n += c
		if h.Buckets[i] >= 1e-4 {
			over100us += c
		}
		if h.Buckets[i] >= 1e-3 {
			over1ms += c
		}
	}
	q := func(p float64) time.Duration {
		var acc uint64
		for i, c := range h.Counts {
			acc += c
			if n > 0 && float64(acc) >= p*float64(n) {
				b := h.Buckets[i+1]
				if math.IsInf(b, 1) { // the last bucket: report its lower bound
					b = h.Buckets[i]
				}
				return time.Duration(b * 1e9)
			}
		}
		return 0
	}
	return fmt.Sprintf("n=%d p50<=%v p99<=%v p99.9<=%v >=100us:%d >=1ms:%d", n, q(.5), q(.99), q(.999), over100us, over1ms)
}

// startTrace starts an execution trace into path (none if path is ""), and returns what stops
// it and closes the file. A trace that cannot start is reported on stderr, not fatal.
func startTrace(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = trace.Start(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "QBENCH_SERVER_TRACE: %v\n", err)
		return func() {}
	}
	return func() {
		trace.Stop()
		f.Close()
	}
}
