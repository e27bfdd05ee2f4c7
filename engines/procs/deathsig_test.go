package procs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes this test binary, started again by TestChildDiesWithParent, start a
// redis-server through Start, write its PID to the named file and wait to be killed.
const helperEnv = "QBENCH_PROCS_DEATH_HELPER"

func TestMain(m *testing.M) {
	if pidFile := os.Getenv(helperEnv); pidFile != "" {
		runDeathHelper(pidFile)
		return
	}
	os.Exit(m.Run())
}

func runDeathHelper(pidFile string) {
	ports, err := FreePorts(1)
	if err != nil {
		os.Exit(1)
	}
	p, err := Start(Command{Path: redisServer(), Args: []string{"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", filepath.Dir(pidFile)}})
	if err != nil {
		os.Exit(1)
	}
	if err := os.WriteFile(pidFile+".tmp", []byte(strconv.Itoa(p.PID())+"\n"), 0o644); err != nil {
		os.Exit(1)
	}
	_ = os.Rename(pidFile+".tmp", pidFile)
	<-p.Done()
	os.Exit(3)
}

func redisServer() string {
	if b := os.Getenv("QBENCH_REDIS_SERVER"); b != "" {
		return b
	}
	return "redis-server"
}

// gone reports whether pid has exited: no such process, or a zombie nobody has reaped yet (in a
// container the reaper of orphans may be slow or absent).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// A process started through Start dies with the process that started it: a helper process starts
// a redis-server, the helper is killed with SIGKILL (no chance to clean up), and the kernel's
// parent-death signal must take the redis-server with it.
func TestChildDiesWithParent(t *testing.T) {
	if _, err := exec.LookPath(redisServer()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is required under CI: %v", err)
		}
		t.Skip("redis-server not installed")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "redis.pid")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper, err := Start(Command{Path: exe, Args: []string{"-test.run=^$"}, Env: []string{helperEnv + "=" + pidFile}, Log: filepath.Join(dir, "helper.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Kill() })
	var redisPID int
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = helper.WaitReady(ctx, 10*time.Millisecond, func(context.Context) error {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return errors.New("no pid yet")
		}
		redisPID = atoi(t, strings.TrimSpace(string(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-redisPID, syscall.SIGKILL) })
	if gone(redisPID) {
		t.Fatalf("redis-server %d not running before the helper was killed", redisPID)
	}
	// SIGKILL the helper alone (not its group: redis-server has a group of its own anyway).
	if err := syscall.Kill(helper.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-helper.Done()
	deadline := time.Now().Add(2 * time.Second)
	for !gone(redisPID) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone(redisPID) {
		t.Fatalf("redis-server %d outlived its parent by 2 s", redisPID)
	}
}

func TestLogTailInMemory(t *testing.T) {
	p, err := Start(Command{Path: "sh", Args: []string{"-c", "echo hello; echo oops >&2"}})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if got := p.LogTail(100); got != "hello\noops" {
		t.Fatalf("LogTail = %q, want both streams", got)
	}
}
