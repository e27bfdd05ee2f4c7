package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"qbench/results"
)

func needRedis(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed")
		}
		t.Skip("redis-server is not installed")
	}
}

func TestSweepUsageErrors(t *testing.T) {
	matrix := writeFile(t, "m.yaml", "name: m\nengine: redis\nduration: 1s\nmatrix:\n  rate: [100, 200]\n")
	plain := writeFile(t, "p.yaml", "name: p\nengine: redis\nrate: 100\nduration: 1s\n")
	base := writeResult(t, t.TempDir(), "b.json", resultsOptions())
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"matrix without -o", []string{"run", matrix}, "give -o DIR"},
		{"matrix with --baseline", []string{"run", matrix, "-o", t.TempDir(), "--baseline", base}, "a matrix is compared with a sweep's index.json"},
		{"search without -o", []string{"search", plain, "--objective", "lost == 0"}, "-o DIR is required"},
		{"search relative objective", []string{"search", plain, "-o", t.TempDir(), "--objective", "produce.p99 <= +10%"}, "is relative"},
		{"search bad objective", []string{"search", plain, "-o", t.TempDir(), "--objective", "p99 <= 5ms"}, "unknown metric"},
		{"search of a matrix", []string{"search", matrix, "-o", t.TempDir()}, "has a matrix"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
		})
	}
}

// A matrix of two rates, each repeated twice, against a managed redis-server: one merged result
// per cell, an index, and each cell's gates checked (exit 3 when one fails).
func TestMatrixRun(t *testing.T) {
	needRedis(t)
	sc := writeFile(t, "m.yaml", `name: m
engine: redis
duration: 1s
warmup: 200ms
matrix:
  rate: [200, 400]
repeat: 2
gates:
  - lost == 0
  - duplicates >= 1
`)
	dir := t.TempDir()
	stdout, stderr, code := qbench(t, "run", "-q", sc, "-o", dir)
	// A count's gate: a flag (a busy machine) would make a latency's miss inconclusive (exit 5),
	// not a count's.
	if code != 3 || !strings.Contains(stderr, "gate failed: duplicates >= 1") {
		t.Fatalf("exit %d (want 3: no run has duplicates)\n%s\n%s", code, stdout, stderr)
	}
	ix, err := results.ReadIndexFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Cells) != 2 || ix.Cells[0].Name != "rate=200" || ix.Cells[1].File != "rate-400.json" || len(ix.Cells[1].RunIDs) != 2 {
		t.Fatalf("index %+v", ix)
	}
	r, err := results.ReadFile(filepath.Join(dir, "rate-400.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Repetitions) != 2 || r.Merged == nil || r.Summary.OfferedRate != 400 {
		t.Fatalf("cell result: %d repetitions, merged %+v, offered %v", len(r.Repetitions), r.Merged, r.Summary.OfferedRate)
	}
	if !strings.Contains(stdout, "rate  trust") || !strings.Contains(stdout, "\n400 ") {
		t.Errorf("no table on stdout (one column per swept key):\n%s", stdout)
	}
	if !strings.Contains(stdout, "cell rate=200:\n") {
		t.Errorf("no gates report headed by its cell:\n%s", stdout)
	}

	// Without gates a cell has nothing to report after the table: no empty "cell NAME:" lines.
	plain := writeFile(t, "p.yaml", "name: p\nengine: embedded\nduration: 500ms\nwarmup: 100ms\nmatrix:\n  rate: [200, 400]\n")
	stdout, stderr, code = qbench(t, "run", "-q", plain, "-o", t.TempDir())
	if code != 0 || strings.Contains(stdout, "cell rate=") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// A rate search with a low ceiling: it starts at the scenario's rate, never passes the ceiling,
// writes a result per step, the index and the capacity chart. (Whether 200 msg/s passes depends
// on how loaded the machine is, so the verdict itself is the schedule test's business:
// bench.TestSearchRate.)
func TestSearchRun(t *testing.T) {
	needRedis(t)
	sc := writeFile(t, "s.yaml", "name: s\nengine: redis\nrate: 100\nduration: 1s\nwarmup: 200ms\n")
	dir := t.TempDir()
	stdout, stderr, code := qbench(t, "search", "-q", sc, "-o", dir, "--objective", "lost == 0", "--objective", "e2e.p99 <= 5s",
		"--high", "200", "--max-runs", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "highest sustainable rate: ") && !strings.Contains(stdout, "no rate met the objective") {
		t.Fatalf("no verdict on stdout:\n%s", stdout)
	}
	ix, err := results.ReadIndexFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Kind != "rate-search" || ix.Search == nil || len(ix.Cells) == 0 || len(ix.Cells) > 3 || ix.Cells[0].Name != "rate=100" {
		t.Fatalf("index %+v", ix)
	}
	for _, c := range ix.Cells {
		if c.Pass == nil || c.OfferedRate > 200 {
			t.Errorf("step %+v", c)
		}
		if _, err := os.Stat(filepath.Join(dir, c.File)); err != nil {
			t.Error(err)
		}
	}
	for _, f := range []string{"capacity-e2e.png", "capacity-e2e.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
