package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"qbench/engines/procs"
)

// children lists the PIDs of pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// The first Ctrl-C stops a run during the engine's start-up within a second, interrupted as soon
// as its first process runs: a Redis Cluster of six redis-server processes (before the cluster is
// formed) and a three-broker Kafka (which takes 30-100 s to start): exit code 4, every process it
// started gone (by PID) and its temp directories removed.
func TestCtrlCDuringStartUp(t *testing.T) {
	cases := []struct{ name, yaml string }{
		{"redis-cluster", "name: c\nengine: redis-cluster\nrate: 100\nduration: 60s\n"},
		{"kafka, three brokers", "name: k\nengine: kafka\nrate: 100\nduration: 60s\nkafka:\n  brokers: 3\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.HasPrefix(c.name, "kafka") {
				needKafka(t)
			} else {
				needRedis(t)
			}
			ctrlCDuringStartUp(t, c.yaml)
		})
	}
}

// needKafka skips (fails under CI=true) without the Kafka jars and java.
func needKafka(t *testing.T) {
	t.Helper()
	_, err := procs.KafkaHome()
	if err == nil {
		_, err = exec.LookPath("java")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func ctrlCDuringStartUp(t *testing.T, yaml string) {
	tmp := t.TempDir()
	sc := writeFile(t, "s.yaml", yaml)
	cmd := exec.Command(qbenchBin, "run", "-q", sc)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var started []int
	for deadline := time.Now().Add(10 * time.Second); len(started) == 0; {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no engine process started within 10 s: %s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
		started = children(cmd.Process.Pid)
	}
	time.Sleep(50 * time.Millisecond) // inside the start-up, more nodes starting
	started = children(cmd.Process.Pid)
	took := ctrlC(t, cmd, done, stderr.String)
	if !strings.Contains(stderr.String(), "interrupted during the engine's start-up") {
		t.Errorf("stderr does not say the start-up was interrupted: %s", stderr.String())
	}
	if took > time.Second {
		t.Errorf("took %s after Ctrl-C to exit, want at most 1s", took.Round(time.Millisecond))
	}
	t.Logf("stopped %s after Ctrl-C, %d processes started by then", took.Round(time.Millisecond), len(started))
	for _, pid := range started {
		if syscall.Kill(pid, 0) == nil {
			if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !strings.Contains(string(b), ") Z ") {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("process %d started by the run is still running", pid)
			}
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temp directories left behind: %v", left)
	}
}
