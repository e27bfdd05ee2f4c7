package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// run --cpuprofile writes a CPU profile (gzip-compressed protobuf, as go tool pprof reads) of
// the run, and the run's summary as usual.
func TestRunCPUProfile(t *testing.T) {
	sc := writeFile(t, "short.yaml", "name: short\nrate: 2000\nduration: 1s\nwarmup: 0s\n")
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	stdout, stderr, code := qbench(t, "run", "-q", "--cpuprofile", prof, sc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !bytes.Contains([]byte(stdout), []byte("messages: sent 2000")) {
		t.Fatalf("summary: %s", stdout)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile of %d bytes does not start with a gzip header", len(b))
	}
}

// run --trace writes a runtime execution trace (go tool trace reads it: it starts with the
// "go 1." header), and --sched-latencies prints the run's goroutine scheduling latencies on
// stderr, with a wake-up count of at least one per message sent.
func TestRunTraceAndSchedLatencies(t *testing.T) {
	sc := writeFile(t, "short.yaml", "name: short\nrate: 2000\nduration: 1s\nwarmup: 0s\n")
	out := filepath.Join(t.TempDir(), "run.trace")
	stdout, stderr, code := qbench(t, "run", "-q", "--trace", out, "--sched-latencies", sc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !bytes.Contains([]byte(stdout), []byte("messages: sent 2000")) {
		t.Fatalf("summary: %s", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) || len(b) < 1000 {
		t.Fatalf("trace of %d bytes starts %q", len(b), b[:min(len(b), 16)])
	}
	var n int
	if i := bytes.Index([]byte(stderr), []byte("/sched/latencies:seconds: ")); i < 0 {
		t.Fatalf("no scheduling latencies on stderr: %s", stderr)
	} else if _, err := fmt.Sscanf(stderr[i+len("/sched/latencies:seconds: "):], "%d wake-ups", &n); err != nil || n < 2000 {
		t.Fatalf("scheduling latencies: %d wake-ups (%v) in %s", n, err, stderr)
	}
}
