package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every file a run writes is checked before the run starts, in every mode (a single run, repeat:,
// a matrix, the comparison's files of --baseline), and a baseline of another scenario is refused
// then too: each case must fail with exit 2 at once, not after the run. The scenarios last 60 s,
// so a case that ran first would time the test out.
func TestOutputsCheckedBeforeAnyRun(t *testing.T) {
	long := "rate: 100\nduration: 60s\n"
	single := writeFile(t, "single.yaml", "name: single\n"+long)
	repeat := writeFile(t, "repeat.yaml", "name: repeat\nrepeat: 2\n"+long)
	matrix := writeFile(t, "matrix.yaml", "name: matrix\n"+long+"matrix:\n  producers: [1, 2]\n")
	// A result of another scenario (the fixture's) as the baseline.
	base := writeResult(t, t.TempDir(), "b.json", resultsOptions())
	file := "/nonexistent/x.json"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"repeat: -o", []string{"run", repeat, "-o", file}, "-o /nonexistent/x.json: cannot write"},
		{"matrix -o", []string{"run", matrix, "-o", "/proc/nonexistent"}, "-o /proc/nonexistent: cannot make the results directory"},
		{"--json", []string{"run", single, "--gate", "lost == 0", "--json", file}, "--json /nonexistent/x.json: cannot write"},
		{"--junit", []string{"run", single, "--gate", "lost == 0", "--junit", file}, "--junit /nonexistent/x.json: cannot write"},
		{"--markdown", []string{"run", repeat, "--gate", "lost == 0", "--markdown", file}, "--markdown /nonexistent/x.json: cannot write"},
		{"--cpuprofile of a sweep", []string{"run", repeat, "--cpuprofile", file}, "--cpuprofile /nonexistent/x.json"},
		{"--baseline of another scenario", []string{"run", single, "--baseline", base}, "ran a different scenario (it differs in"},
		{"--baseline of another scenario, repeat:", []string{"run", repeat, "--baseline", base}, "ran a different scenario"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want 2 with %q; stderr: %s", code, c.want, stderr)
			}
		})
	}
}

// A repeat: run prints its summary before writing the merged result, and still prints it when
// the write fails (the file's directory removed during the run); --cpuprofile profiles it.
func TestRepeatPrintsSummaryWhenWriteFails(t *testing.T) {
	sc := writeFile(t, "r.yaml", "name: r\nrate: 500\nduration: 1s\nwarmup: 0s\nrepeat: 2\n")
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "cpu.pprof")
	cmd := []string{"run", "-q", sc, "-o", filepath.Join(gone, "r.json"), "--cpuprofile", prof}
	// The directory goes once the check has passed and the runs are under way.
	go func() {
		for {
			if _, err := os.Stat(prof); err == nil {
				os.RemoveAll(gone)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	stdout, stderr, code := qbench(t, cmd...)
	if code != 1 || !strings.Contains(stderr, "writing the result") {
		t.Fatalf("exit %d, want 1 (the write failed); stderr: %s", code, stderr)
	}
	if !strings.Contains(stdout, "messages: sent 1000") {
		t.Fatalf("summary not printed:\n%s", stdout)
	}
	b, err := os.ReadFile(prof)
	if err != nil || len(b) < 100 || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("no CPU profile of the sweep (%d bytes): %v", len(b), err)
	}
}

// The memory budget (--memory-budget) bounds what validation accepts and each rate a search
// tries: both are refused before they run, exit 2, naming the figures.
func TestMemoryBudgetFlag(t *testing.T) {
	sc := writeFile(t, "s.yaml", "name: s\nrate: 8000\nduration: 1s\n")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", sc}, 0, ""},
		{[]string{"validate", "--memory-budget", "100KiB", sc}, 2, "s.yaml:2: rate: 8000 messages per second for 1s is 8e+03 messages; the ledger keeps an unresolved one (sent, not yet delivered to every group) in 40 bytes (1 receiving group(s)) for the first 92160 of each producer's backlog and in at most 8.56 bytes beyond (acknowledged messages, in the dense form), and each settled one in 1/256 byte: with a backlog of up to 8e+03 messages (the rate over 1m5s: a minute for latency and recovery, drain_timeout 5s; and 8192 per producer a loss can hold) that is 312.5 KiB, more than the memory budget 100.0 KiB (--memory-budget)"},
		{[]string{"validate", "--memory-budget", "lots", sc}, 2, `--memory-budget: "lots" is not a size`},
		{[]string{"search", "--memory-budget", "500KiB", sc, "-o", t.TempDir(), "--objective", "lost == 0", "--low", "16000"}, 2, "search at 16000 msg/s: rate: 16000 messages per second"},
	}
	for _, c := range cases {
		_, stderr, code := qbench(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("qbench %v: exit %d, want %d with %q; stderr: %s", c.args, code, c.code, c.want, stderr)
		}
	}
}
