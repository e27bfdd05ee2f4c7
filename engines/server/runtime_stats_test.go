package server

import (
	"bytes"
	"os"
	"path/filepath"
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

func TestStartTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.out")
	var stderr bytes.Buffer
	stop := startTrace(path, &stderr)
	New(Config{}) // something to trace
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("trace file starts %q, want the execution trace header \"go 1.\"", b[:min(len(b), 16)])
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	startTrace("", &stderr)() // no trace asked: nothing happens
	stop = startTrace(filepath.Join(t.TempDir(), "no", "such", "dir"), &stderr)
	stop()
	if !strings.Contains(stderr.String(), "QBENCH_SERVER_TRACE") {
		t.Errorf("an uncreatable trace file was not reported: stderr %q", stderr.String())
	}
}
