package procs

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// needRabbit skips without rabbitmq-server, and fails under CI=true (.ci/test installs it).
func needRabbit(t *testing.T) {
	t.Helper()
	if _, err := RabbitServerPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
}

// A node starts on loopback with a port mapper of its own, dies to a crash and starts again;
// Stop leaves no process behind.
func TestRabbitStartKillStart(t *testing.T) {
	needRabbit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, err := StartRabbitCluster(ctx, RabbitConfig{Dir: t.TempDir()}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(5 * time.Second)
	n := c.Nodes[0]
	t.Logf("started in %s", n.StartedIn())
	pid := n.PID()
	if err := n.Kill(); err != nil || n.PID() != 0 {
		t.Fatalf("kill: %v, pid after %d", err, n.PID())
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted in %s", n.StartedIn())
	if n.PID() == 0 || n.PID() == pid {
		t.Fatalf("restarted pid %d (was %d)", n.PID(), pid)
	}
	pids := []int{n.PID(), c.epmd.PID()}
	if err := c.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		// Stop waits for each child, which reaps it: the PID is gone.
		if err := syscall.Kill(p, 0); err == nil {
			t.Errorf("process %d still running after Stop", p)
		}
	}
}
