package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// startServe runs `qbench serve --port 0 args...` and returns its address and process.
func startServe(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(qbenchBin, append([]string{"serve", "--port", "0"}, args...)...)
	return startServeCmd(t, cmd), cmd
}

// startServeCmd starts cmd, a `qbench serve --port 0 ...` the caller has prepared (another pipe,
// process attributes), and returns the address it prints first on stdout.
func startServeCmd(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return strings.TrimSpace(addr)
}

// TestAppendOnlyServeKillCheckFix: writes acknowledged under appendfsync always survive SIGKILL
// of `qbench serve`; `qbench aof check` takes the preallocated zeros the kill left for what they
// are, finds a torn final record, `qbench aof fix` cuts it after a backup, and the server starts
// on the fixed log.
func TestAppendOnlyServeKillCheckFix(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--dir", dir, "--appendonly", "yes", "--appendfsync", "always"}
	addr, cmd := startServe(t, flags...)
	c := redis.NewClient(&redis.Options{Addr: addr})
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if err := c.RPush(ctx, "l", i).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()

	out, _, code := qbench(t, "aof", "check", dir)
	if code != 0 || !strings.Contains(out, "ok, 10 records") || !strings.Contains(out, "zero bytes (preallocated space") {
		t.Fatalf("aof check = %d:\n%s", code, out)
	}
	incr, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.qaof"))
	if len(incr) != 1 {
		t.Fatalf("incremental files: %v", incr)
	}
	data, err := os.ReadFile(incr[0])
	if err != nil {
		t.Fatal(err)
	}
	// Tear the last record: cut its last 3 bytes (and the zeros after it).
	if err := os.Truncate(incr[0], int64(len(bytes.TrimRight(data, "\x00")))-3); err != nil {
		t.Fatal(err)
	}
	out, _, code = qbench(t, "aof", "check", dir)
	if code != 1 || !strings.Contains(out, "truncated at byte offset") || !strings.Contains(out, "9 valid records before it") {
		t.Fatalf("aof check of a torn log = %d:\n%s", code, out)
	}
	out, _, code = qbench(t, "aof", "fix", dir)
	if code != 0 || !strings.Contains(out, "1 records discarded") || !strings.Contains(out, ".bak") {
		t.Fatalf("aof fix = %d:\n%s", code, out)
	}
	if _, err := os.Stat(incr[0] + ".bak"); err != nil {
		t.Fatalf("no backup: %v", err)
	}
	out, _, code = qbench(t, "aof", "check", filepath.Join(dir, "appendonlydir"))
	if code != 0 || !strings.Contains(out, "ok, 9 records") {
		t.Fatalf("aof check after fix = %d:\n%s", code, out)
	}

	addr, cmd = startServe(t, flags...)
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	c = redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if n, err := c.LLen(ctx, "l").Result(); err != nil || n != 9 {
		t.Fatalf("LLEN after fix = %d, %v", n, err)
	}

	if _, _, code := qbench(t, "aof", "check", t.TempDir()); code != 2 {
		t.Fatalf("aof check of a directory without a log: exit %d, want 2", code)
	}
	if _, _, code := qbench(t, "serve", "--appendfsync", "sometimes"); code != 2 {
		t.Fatalf("serve --appendfsync sometimes: exit %d, want 2", code)
	}
	if _, _, code := qbench(t, "serve", "--appendonly", "yes", "--aof-preallocate", "maybe", "--dir", t.TempDir()); code != 2 {
		t.Fatalf("serve --aof-preallocate maybe: exit %d, want 2", code)
	}
}

// TestServeSimulatedCrashes: with --simulated-fs, SIGUSR1 is a power loss and SIGUSR2 a process
// crash, each followed by recovery on the same port; under always nothing acknowledged is lost.
func TestServeSimulatedCrashes(t *testing.T) {
	cmd := exec.Command(qbenchBin, "serve", "--port", "0", "--dir", "/sim", "--simulated-fs", "--appendonly", "yes", "--appendfsync", "always")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	addr := startServeCmd(t, cmd)
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	logs := bufio.NewScanner(stderr)
	waitFor := func(s string) {
		t.Helper()
		for logs.Scan() {
			if strings.Contains(logs.Text(), s) {
				return
			}
		}
		t.Fatalf("qbench serve never logged %q", s)
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	for i, sig := range []os.Signal{syscall.SIGUSR1, syscall.SIGUSR2} {
		for j := 0; j < 20; j++ {
			if err := c.RPush(ctx, "l", j).Err(); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Process.Signal(sig)
		waitFor("recovered and serving")
		if n, err := c.LLen(ctx, "l").Result(); err != nil || n != int64(20*(i+1)) {
			t.Fatalf("after signal %v: LLEN = %d, %v", sig, n, err)
		}
	}
}

// TestServeExitsOnShutdown: SHUTDOWN ends `qbench serve` (after making the log durable).
func TestServeExitsOnShutdown(t *testing.T) {
	dir := t.TempDir()
	addr, cmd := startServe(t, "--dir", dir, "--appendonly", "yes", "--appendfsync", "no")
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.Shutdown(ctx)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("qbench serve after SHUTDOWN: %v", err)
	}
	out, _, code := qbench(t, "aof", "check", dir)
	if code != 0 || !strings.Contains(out, "ok, 1 records") {
		t.Fatalf("aof check after SHUTDOWN = %d:\n%s", code, out)
	}
}
