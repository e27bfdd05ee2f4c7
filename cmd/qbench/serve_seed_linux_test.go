package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// seedFixture is the dump.rdb redis-server 7.0.15 saved for scenarios/seeded-backlog.yaml: 500
// entries in the stream orders, and the hash settings in db 3.
const seedFixture = "../../scenarios/seed/orders-backlog.rdb"

// qbench serve --seed-rdb starts from a Redis dump.rdb; a file it cannot load in full is a usage
// error (exit 2) naming the file, before anything listens.
func TestServeSeedRDB(t *testing.T) {
	data, err := os.ReadFile(seedFixture)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "cut.rdb")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"missing", "/nonexistent/dump.rdb", []string{"--seed-rdb", "/nonexistent/dump.rdb"}},
		{"truncated", truncated, []string{truncated, "offset ", "truncated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := qbench(t, "serve", "--port", "0", "--dir", t.TempDir(), "--seed-rdb", tc.file)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}

	cmd := exec.Command(qbenchBin, "serve", "--port", "0", "--dir", t.TempDir(), "--seed-rdb", seedFixture)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	addr := startServeCmd(t, cmd)
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: 3})
	defer c.Close()
	if v, err := c.HGet(ctx, "settings", "region").Result(); err != nil || v != "eu-west" {
		t.Errorf("db 3 HGET settings region = %q, %v", v, err)
	}
	c0 := redis.NewClient(&redis.Options{Addr: addr})
	defer c0.Close()
	if n, err := c0.XLen(ctx, "orders").Result(); err != nil || n != 500 {
		t.Errorf("XLEN orders = %d, %v", n, err)
	}
}
