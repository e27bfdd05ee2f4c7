package procs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStopKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The shell ignores SIGTERM and forks a grandchild: Stop must escalate to SIGKILL and take
	// the grandchild with it.
	p, err := Start(Command{
		Path: "sh",
		Args: []string{"-c", `trap "" TERM; sleep 300 & echo $! > ` + pidFile + `; wait`},
		Log:  filepath.Join(dir, "log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	var child int
	err = p.WaitReady(context.Background(), 10*time.Millisecond, func(context.Context) error {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return errors.New("no pid yet")
		}
		child = atoi(t, strings.TrimSpace(string(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() {
		t.Fatal("leader still running after Stop")
	}
	deadline := time.Now().Add(2 * time.Second)
	for alive(child) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the kernel reaps the orphan asynchronously
	}
	if alive(child) {
		t.Fatalf("grandchild %d survived Stop", child)
	}
}

func TestWaitReadyReportsEarlyExit(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(Command{Path: "sh", Args: []string{"-c", "echo boom; exit 3"}, Log: filepath.Join(dir, "log")})
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(context.Background(), 10*time.Millisecond, func(context.Context) error { return errors.New("never") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("WaitReady = %v, want an error with the log tail", err)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ports, err := FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p == 0 || seen[p] {
			t.Fatalf("ports %v", ports)
		}
		seen[p] = true
	}
}

func TestKafkaProperties(t *testing.T) {
	k := &Kafka{cfg: KafkaConfig{Dir: "/d", Settings: map[string]string{
		"log.flush.interval.ms": "1000",
		"num.partitions":        "3",
	}}, port: 9, ctrlPort: 10}
	p := k.properties()
	for key, want := range map[string]string{
		"log.flush.interval.ms":           "1000",
		"log.flush.scheduler.interval.ms": "1000", // filled in: without it the interval is ignored
		"num.partitions":                  "3",    // settings override the defaults
		"listeners":                       "PLAINTEXT://127.0.0.1:9,CONTROLLER://127.0.0.1:10",
		"controller.quorum.voters":        "1@127.0.0.1:10",
		"log.dirs":                        "/d/data",
	} {
		if p[key] != want {
			t.Errorf("%s = %q, want %q", key, p[key], want)
		}
	}
}

func TestClusterID(t *testing.T) {
	for range 100 {
		id := clusterID()
		if len(id) != 22 || id[0] == '-' {
			t.Fatalf("clusterID %q", id)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a pid: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
