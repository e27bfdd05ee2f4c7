package procs

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// needNATS skips without nats-server, and fails under CI=true (.ci/test installs it).
func needNATS(t *testing.T) {
	t.Helper()
	if _, err := NATSServerPath(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
}

// A node starts healthy on loopback, dies to a crash, and starts again on its directory.
func TestNATSStartKillStart(t *testing.T) {
	needNATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := StartNATSCluster(ctx, NATSConfig{Dir: t.TempDir(), SyncInterval: "always"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	n := c.Nodes[0]
	if host, _, _ := net.SplitHostPort(n.Addr()); host != "127.0.0.1" {
		t.Fatalf("listens on %s", n.Addr())
	}
	conn, err := net.Dial("tcp", n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := n.Healthz(ctx); err != nil {
		t.Fatalf("healthz of a running node: %v", err)
	}
	pid := n.PID()
	if err := n.Kill(); err != nil || n.PID() != 0 {
		t.Fatalf("kill: %v, pid after %d", err, n.PID())
	}
	if err := n.Healthz(ctx); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("healthz of a killed node: %v, want connection refused", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n.PID() == 0 || n.PID() == pid {
		t.Fatalf("restarted pid %d (was %d)", n.PID(), pid)
	}
}
