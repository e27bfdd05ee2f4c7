package redisq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
	"qbench/engines/procs"
)

// RedisServerEnv names the environment variable that overrides which redis-server to run.
const RedisServerEnv = "QBENCH_REDIS_SERVER"

func init() {
	engines.Register(WithSection(engines.Registration{
		Name:        "redis",
		Designs:     designs,
		Summary:     "a real redis-server started by qbench on a free loopback port in a fresh directory, with the scenario's persistence",
		New:         newManagedEngine,
		Faults:      []string{"stall", "server-crash", "power-loss", "disk-full", "io-error", "fork-failure", "failover", "command"},
		Sections:    managedSections,
		Conformance: conformance,
		Requires:    func() error { _, err := RedisServerPath(); return err },
	}))
}

// ManagedRedis is a redis-server child process on 127.0.0.1, in a directory of its own, run
// through engines/procs: its own process group, SIGKILL from the kernel if qbench dies, stopped
// by PID, its output kept for error messages.
type ManagedRedis struct {
	Bin  string
	Dir  string
	Port int
	Args []string
	// cmd is how the server is started (again, on Restart); proc is the running process.
	cmd procs.Command
	// running is the process: atomic, since a fault restarts it while the runner reads its PID.
	running atomic.Pointer[procs.Proc]
	// ownDir is removed on Stop.
	ownDir bool
	// tasks holds the server at the tasks it has while a fork-failure fault lasts (forkfail.go).
	tasks *procs.TaskLimit
	// death is the first time the server exited on its own, kept across a Kill and Restart.
	death *engines.Death
}

// StartRedis starts redis-server with config (Redis setting names and values) in a fresh
// directory under os.TempDir (or dir, if not empty), and waits until it answers PING.
func StartRedis(ctx context.Context, dir string, config map[string]string) (*ManagedRedis, error) {
	bin, err := RedisServerPath()
	if err != nil {
		return nil, err
	}
	m := &ManagedRedis{Bin: bin, Dir: dir}
	if m.Dir == "" {
		d, err := os.MkdirTemp("", "qbench-redis-")
		if err != nil {
			return nil, err
		}
		m.Dir, m.ownDir = d, true
	}
	ports, err := procs.FreePorts(1)
	if err != nil {
		return nil, err
	}
	m.Port = ports[0]
	// Defaults first, then the scenario's settings: memory only unless the scenario says otherwise.
	settings := map[string]string{"save": "", "appendonly": "no", "enable-debug-command": "local"}
	for k, v := range config {
		settings[k] = v
	}
	m.Args = []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(m.Port), "--dir", m.Dir, "--daemonize", "no", "--protected-mode", "yes"}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m.Args = append(m.Args, "--"+k, settings[k])
	}
	// The working directory is left alone: --dir is absolute, and a child must not chdir into a
	// lossyfs mount this process serves (between fork and exec that deadlocks).
	m.cmd = procs.Command{Path: m.Bin, Args: m.Args}
	if err := m.start(ctx); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

// RedisServerPath is the redis-server to run: $QBENCH_REDIS_SERVER, or redis-server on PATH.
func RedisServerPath() (string, error) {
	if bin := os.Getenv(RedisServerEnv); bin != "" {
		return bin, nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not found on PATH (install Debian's redis-server, or set %s): %w", RedisServerEnv, err)
	}
	return bin, nil
}

// Addr is the server's address.
func (m *ManagedRedis) Addr() string { return "127.0.0.1:" + strconv.Itoa(m.Port) }

// PID is the server's process ID, 0 when not running.
func (m *ManagedRedis) PID() int {
	if m.proc() == nil {
		return 0
	}
	return m.proc().PID()
}

func (m *ManagedRedis) start(ctx context.Context) error {
	p, err := procs.Start(m.cmd)
	if err != nil {
		return err
	}
	m.running.Store(p)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.WaitReady(ctx, 20*time.Millisecond, func(ctx context.Context) error { return c.Ping(ctx).Err() })
}

// LogTail returns the last n bytes of the server's log ("" when it is not running).
func (m *ManagedRedis) LogTail(n int) string {
	if m.proc() == nil {
		return ""
	}
	return m.proc().LogTail(n)
}

// Kill ends the process without warning (SIGKILL), as a crash would, and waits for it to go.
func (m *ManagedRedis) Kill() error {
	if m.PID() == 0 {
		return errors.New("redis-server is not running")
	}
	if d, died := deathOf(m.proc(), m.proc().LogTail(4096)); died && m.death == nil {
		m.death = &d // it had exited on its own: the kill only clears it away
	}
	err := m.proc().Kill()
	m.running.Store(nil)
	return err
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
	ferr := m.ForkFail(false)
	if m.proc() != nil {
		_ = m.proc().Stop(5 * time.Second)
		m.running.Store(nil)
	}
	if m.ownDir {
		return errors.Join(ferr, os.RemoveAll(m.Dir))
	}
	return ferr
}

func newManagedEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	if err := checkForkFailure(spec); err != nil {
		return nil, err
	}
	if spec.LossyFS {
		if spec.Replicas > 0 {
			return nil, errors.New("replicas with power-loss, disk-full or io-error faults are not supported yet")
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

// IOError makes the data directory fail with EIO at point, or stop ("") (engines.IOFailer).
func (e *lossyEngine) IOError(_ context.Context, point string) error {
	p, err := ioPoint(point)
	if err == nil {
		e.server.FS.FailIO(p)
	}
	return err
}

// proc is the running process, or nil.
func (m *ManagedRedis) proc() *procs.Proc { return m.running.Load() }
