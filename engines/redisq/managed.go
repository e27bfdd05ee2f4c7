package redisq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// RedisServerEnv names the environment variable that overrides which redis-server to run.
const RedisServerEnv = "QBENCH_REDIS_SERVER"

func init() {
	engines.Register(engines.Registration{
		Name:     "redis",
		Designs:  designs,
		Summary:  "a real redis-server started by qbench on a free loopback port in a fresh directory, with the scenario's persistence",
		New:      newManagedEngine,
		Faults:   []string{"stall", "server-crash", "power-loss", "disk-full", "failover", "command"},
		Sections: managedSections,
	})
}

// ManagedRedis is a redis-server child process on 127.0.0.1, in a directory of its own.
type ManagedRedis struct {
	Bin  string
	Dir  string
	Port int
	Args []string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	// ownDir is removed on Stop.
	ownDir bool
	exited chan struct{}
}

// StartRedis starts redis-server with config (Redis setting names and values) in a fresh
// directory under os.TempDir (or dir, if not empty), and waits until it answers PING.
func StartRedis(ctx context.Context, dir string, config map[string]string) (*ManagedRedis, error) {
	bin := os.Getenv(RedisServerEnv)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			return nil, fmt.Errorf("redis-server not found on PATH (install Debian's redis-server, or set %s): %w", RedisServerEnv, err)
		}
	}
	m := &ManagedRedis{Bin: bin, Dir: dir}
	if m.Dir == "" {
		d, err := os.MkdirTemp("", "qbench-redis-")
		if err != nil {
			return nil, err
		}
		m.Dir, m.ownDir = d, true
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	m.Port = port
	// Defaults first, then the scenario's settings: memory only unless the scenario says otherwise.
	settings := map[string]string{"save": "", "appendonly": "no", "enable-debug-command": "local"}
	for k, v := range config {
		settings[k] = v
	}
	m.Args = []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", m.Dir, "--daemonize", "no", "--protected-mode", "yes"}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m.Args = append(m.Args, "--"+k, settings[k])
	}
	if err := m.start(ctx); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

// Addr is the server's address.
func (m *ManagedRedis) Addr() string { return "127.0.0.1:" + strconv.Itoa(m.Port) }

// PID is the server's process ID, 0 when not running.
func (m *ManagedRedis) PID() int {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

func (m *ManagedRedis) start(ctx context.Context) error {
	m.log = &bytes.Buffer{}
	m.cmd = exec.Command(m.Bin, m.Args...)
	// The working directory is left alone: --dir is absolute, and a child must not chdir into a
	// lossyfs mount this process serves (between fork and exec that deadlocks).
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", m.Bin, err)
	}
	m.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(m.cmd, m.exited)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		select {
		case <-m.exited:
			return fmt.Errorf("redis-server exited at start-up: %s", lastLines(m.log.String(), 5))
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("redis-server did not answer within 10 s: %v; log: %s", err, lastLines(m.log.String(), 5))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill ends the process without warning (SIGKILL), as a crash would, and waits for it to go.
func (m *ManagedRedis) Kill() error {
	if m.PID() == 0 {
		return errors.New("redis-server is not running")
	}
	_ = syscall.Kill(-m.PID(), syscall.SIGKILL)
	<-m.exited
	m.cmd = nil
	return nil
}

// Restart starts the server again on the same directory and port.
func (m *ManagedRedis) Restart(ctx context.Context) error {
	if m.PID() != 0 {
		return errors.New("redis-server is still running")
	}
	return m.start(ctx)
}

// Stop ends the server (SIGTERM, then SIGKILL after 5 s) and removes its directory if qbench
// made it.
func (m *ManagedRedis) Stop() error {
	if pid := m.PID(); pid != 0 {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-m.exited
		}
		m.cmd = nil
	}
	if m.ownDir {
		return os.RemoveAll(m.Dir)
	}
	return nil
}

func newManagedEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	if spec.LossyFS {
		if spec.Replicas > 0 {
			return nil, errors.New("replicas with power-loss or disk-full faults are not supported yet")
		}
		return newLossyManagedEngine(ctx, spec)
	}
	m, err := StartRedis(ctx, "", spec.Persistence)
	if err != nil {
		return nil, err
	}
	if spec.Replicas > 0 {
		return newReplicatedEngine(ctx, spec, m)
	}
	e, err := newEngine(ctx, spec, "redis", m.Addr(), "")
	if err != nil {
		m.Stop()
		return nil, err
	}
	e.closeTarget = m.Stop
	e.pid = func() string { return strconv.Itoa(m.PID()) }
	return &managedEngine{engine: e, server: m}, nil
}

// managedEngine is a redis-server qbench started: it can be killed and restarted.
type managedEngine struct {
	*engine
	server *ManagedRedis
}

// Crash kills redis-server without warning (engines.Crasher). A power loss needs the data on
// lossyfs (lossyEngine), which the runner asks for when a scenario has one.
func (e *managedEngine) Crash(_ context.Context, kind engines.CrashKind) error {
	if kind != engines.ProcessCrash {
		return fmt.Errorf("%s needs the power-loss file system (the runner asks for it when a scenario has a power-loss fault)", kind)
	}
	return e.server.Kill()
}

// Restart starts redis-server again on the same port and directory.
func (e *managedEngine) Restart(ctx context.Context) error { return e.server.Restart(ctx) }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte(" | ")))
}

// newLossyManagedEngine runs redis-server with its directory on lossyfs, so that a crash can be a
// power loss and the disk can fill.
func newLossyManagedEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	l, err := StartLossyRedis(ctx, spec.Persistence)
	if err != nil {
		return nil, err
	}
	// Start-up files would long be on disk on a machine that has run for a while.
	if err := l.FS.Sync(); err != nil {
		l.Stop()
		return nil, err
	}
	e, err := newEngine(ctx, spec, "redis", l.Addr(), "")
	if err != nil {
		l.Stop()
		return nil, err
	}
	e.closeTarget = l.Stop
	e.pid = func() string { return strconv.Itoa(l.PID()) }
	return &lossyEngine{engine: e, server: l}, nil
}

// lossyEngine is a managed redis-server on lossyfs: it can crash (a power loss too) and its
// disk can fill.
type lossyEngine struct {
	*engine
	server *LossyRedis
}

// Crash kills redis-server; a power loss also drops every byte not fsynced (engines.Crasher).
func (e *lossyEngine) Crash(ctx context.Context, kind engines.CrashKind) error {
	return e.server.Crash(ctx, kind)
}

// Restart starts redis-server again on the same mount.
func (e *lossyEngine) Restart(ctx context.Context) error { return e.server.Restart(ctx) }

// DiskFull makes the data directory refuse writes (ENOSPC) or accept them again
// (engines.DiskFiller).
func (e *lossyEngine) DiskFull(_ context.Context, full bool) error {
	e.server.DiskFull(full)
	return nil
}
