package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"qbench/results"
)

// Ctrl-C stops any run within a second, result written and exit code 4, even runs that would
// otherwise be slow to stop: a consumer inside a long piece of work, a server stalled for 30 s
// (clients blocked on it, the sweep and the tear-down unanswered) with a consumer paused, and a
// long drain ahead.
func TestCtrlCStopsWithinASecond(t *testing.T) {
	cases := []struct{ name, yaml string }{
		{"long work", "name: work\nrate: 2000\nduration: 60s\ndrain_timeout: 30s\nwork: 50ms\nconsumers: 1\n"},
		{"stalled server", "name: stalled\nrate: 1000\nduration: 60s\ndrain_timeout: 30s\nfaults:\n" +
			"  - {at: 500ms, kind: consumer-pause, consumer: 0, duration: 50s}\n  - {at: 500ms, kind: stall, duration: 30s}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			cmd := exec.Command(qbenchBin, "run", "-q", writeFile(t, "s.yaml", c.yaml), "-o", out)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second) // into the work, or into the stall
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			took := ctrlC(t, cmd, done, func() string { return "" })
			if took > time.Second {
				t.Errorf("took %s after Ctrl-C to exit, want at most 1s", took.Round(time.Millisecond))
			}
			t.Logf("stopped %s after Ctrl-C", took.Round(time.Millisecond))
			res, rerr := results.ReadFile(out)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if !res.Interrupted || res.Summary.Ledger.Acked == 0 {
				t.Fatalf("interrupted %v, acked %d", res.Interrupted, res.Summary.Ledger.Acked)
			}
		})
	}
}

// ctrlC sends the first Ctrl-C to cmd (whose Wait reports on done), waits at most 20 s for it to
// exit, fails unless it exited with 4 (interrupted), and returns how long it took after the signal.
// stderr gives what the process wrote, shown on failure.
func ctrlC(t *testing.T, cmd *exec.Cmd, done <-chan error, stderr func() string) time.Duration {
	t.Helper()
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("qbench did not stop within 20 s of Ctrl-C")
	}
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("exit: %v, want exit code 4 (interrupted); stderr: %s", err, stderr())
	}
	return took
}
