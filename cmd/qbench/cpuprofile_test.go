package main

import (
	"bytes"
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
