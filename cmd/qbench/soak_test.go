package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"qbench/results"
)

// The soak: scenarios/library/workloads/soak-30m.yaml (50,000 msg/s on the embedded server, 30
// minutes) with qbench's resident memory sampled every minute, killed with SIGKILL at minute 20;
// the 20 minutes must read back (report, recover) and the memory must be flat after warm-up.
// Opt-in, and run alone:
//
//	QBENCH_SOAK=1 go test ./cmd/qbench -run TestSoakKilledAtMinute20 -timeout 40m -v
//
// QBENCH_SOAK_MINUTES shortens it for a rehearsal (the run is that long, the kill at two
// thirds, a sample every thirtieth of it).
func TestSoakKilledAtMinute20(t *testing.T) {
	if os.Getenv("QBENCH_SOAK") != "1" {
		t.Skip("the 30-minute soak runs with QBENCH_SOAK=1")
	}
	minutes := 30.0
	if v := os.Getenv("QBENCH_SOAK_MINUTES"); v != "" {
		m, err := strconv.ParseFloat(v, 64)
		if err != nil || m < 3 {
			t.Fatalf("QBENCH_SOAK_MINUTES=%q: want a number of minutes, at least 3", v)
		}
		minutes = m
	}
	length := time.Duration(minutes * float64(time.Minute))
	step, killAt := length/30, length*2/3
	warm := 5 * step // the warm-up and the stream filling to its trim length

	dir := t.TempDir()
	out := filepath.Join(dir, "soak.json")
	sc := filepath.Join("..", "..", "scenarios", "library", "workloads", "soak-30m.yaml")
	cmd, stderr, done := startQbench(t, "run", "-q", sc, "-o", out, "--duration", length.String(), "--checkpoint", step.String())

	type sample struct {
		at  time.Duration
		rss int64
	}
	var samples []sample
	began := time.Now()
	tick := time.NewTicker(step)
	defer tick.Stop()
	for time.Since(began) < killAt {
		select {
		case err := <-done:
			t.Fatalf("qbench exited at %s, before the kill: %v; stderr: %s", time.Since(began).Round(time.Second), err, stderr.String())
		case <-tick.C:
			rss, err := residentBytes(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			samples = append(samples, sample{time.Since(began).Round(time.Second), rss})
			t.Logf("%8s  RSS %6.1f MiB", samples[len(samples)-1].at, float64(rss)/(1<<20))
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	<-done
	killed := time.Since(began)

	var settled, peak int64
	for _, s := range samples {
		if s.at >= warm && settled == 0 {
			settled = s.rss
		}
		if s.at >= warm {
			peak = max(peak, s.rss)
		}
	}
	last := samples[len(samples)-1].rss
	t.Logf("RSS after warm-up (%s) %.1f MiB, peak since %.1f MiB, last %.1f MiB (%.2fx)", warm, float64(settled)/(1<<20),
		float64(peak)/(1<<20), float64(last)/(1<<20), float64(last)/float64(settled))
	// Flat: a per-message leak at this rate (a million messages every 20 s) would grow it far more.
	if settled == 0 || float64(peak) > 1.5*float64(settled) {
		t.Errorf("resident memory grew after warm-up: %.1f MiB at %s, peak %.1f MiB", float64(settled)/(1<<20), warm, float64(peak)/(1<<20))
	}

	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatalf("the killed run's result does not read: %v", err)
	}
	if res.Checkpoint == nil {
		t.Fatal("the killed run's result is not a checkpoint")
	}
	covered := time.Duration(res.Checkpoint.CoveredSeconds * float64(time.Second))
	var deliveries int64
	for _, iv := range res.Series {
		deliveries += iv.Deliveries
	}
	t.Logf("killed at %s; the result covers %s: %d seconds of series, acked %d, deliveries %d", killed.Round(time.Second),
		covered.Round(time.Second), len(res.Series), res.Summary.Ledger.Acked, deliveries)
	if deliveries < res.Summary.Ledger.Acked*9/10 {
		t.Errorf("%d deliveries of %d acknowledged: the consumers did not keep up", deliveries, res.Summary.Ledger.Acked)
	}
	if covered < killed-2*step || covered > killed {
		t.Errorf("the result covers %s of a run killed at %s", covered, killed)
	}
	if rate := float64(res.Summary.Ledger.Acked) / covered.Seconds(); rate < 0.9*50000 {
		t.Errorf("acknowledged %.0f msg/s over the covered time, want about 50,000", rate)
	}
	stdout, errOut, code := qbench(t, "report", out, "-o", filepath.Join(dir, "soak.html"))
	if code != 0 {
		t.Fatalf("report: exit %d: %s %s", code, stdout, errOut)
	}
	if _, errOut, code := qbench(t, "recover", out, "-o", filepath.Join(dir, "recovered.json")); code != 0 {
		t.Fatalf("recover: exit %d: %s", code, errOut)
	}
	if _, errOut, code := qbench(t, "report", filepath.Join(dir, "recovered.json")); code != 0 {
		t.Fatalf("report of the recovered result: exit %d: %s", code, errOut)
	}
}

// residentBytes is a process's resident set (VmRSS).
func residentBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
