package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"qbench/engines/server/store"
)

// seedFixture is the dump.rdb redis-server 7.0.15 saved for scenarios/library/workloads/seeded-backlog.yaml: 500
// entries in the stream orders, and the hash settings in db 3.
const seedFixture = "../../scenarios/library/seed/orders-backlog.rdb"

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

// qbench serve --save-rdb writes the dataset at exit as a Redis dump.rdb: after SIGINT, and after
// SHUTDOWN, the file holds the seeded keys and the ones written since.
func TestServeSaveRDB(t *testing.T) {
	if _, stderr, code := qbench(t, "serve", "--port", "0", "--save-rdb", "/nonexistent/dir/dump.rdb"); code != 2 || !strings.Contains(stderr, "--save-rdb") {
		t.Fatalf("a missing directory: exit %d, want 2; stderr:\n%s", code, stderr)
	}
	for _, how := range []string{"SIGINT", "SHUTDOWN"} {
		t.Run(how, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.rdb")
			cmd := exec.Command(qbenchBin, "serve", "--port", "0", "--dir", t.TempDir(), "--seed-rdb", seedFixture, "--save-rdb", out)
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			addr := startServeCmd(t, cmd)
			ctx := context.Background()
			c := redis.NewClient(&redis.Options{Addr: addr})
			defer c.Close()
			if err := c.Set(ctx, "written", strings.Repeat("after the seed ", 10), 0).Err(); err != nil {
				t.Fatal(err)
			}
			if how == "SIGINT" {
				cmd.Process.Signal(os.Interrupt)
			} else {
				c.Do(ctx, "SHUTDOWN") // the connection closes: no reply
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit: %v", err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := store.ReadRDBFile(data, store.RDBLimits{IntsetMax: 512, HashMaxEntries: 512, HashMaxValue: 64,
				ZsetMaxEntries: 128, ZsetMaxValue: 64, NodeMaxEntries: 100, NodeMaxBytes: 4096})
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]bool{}
			for _, k := range keys {
				found[fmt.Sprintf("%d/%s", k.DB, k.Key)] = true
			}
			for _, want := range []string{"0/orders", "3/settings", "0/written"} {
				if !found[want] {
					t.Errorf("%s missing from the saved file (has %v)", want, found)
				}
			}
		})
	}
}
