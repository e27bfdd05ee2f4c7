package redisq

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"qbench/engines"
	"qbench/engines/procs"
	"qbench/engines/server"
)

// childEnv, when set in a process's environment, makes RunChildServerIfAsked turn that process
// into the in-repo server. The "server" target starts its own executable this way (qbench, or a
// test binary), so our server runs as a child process that a fault can kill without warning.
const childEnv = "QBENCH_CHILD_SERVER"

// QuietChild makes a child server started from now on keep its start-up notice to itself
// (qbench run -q); warnings and errors still reach stderr.
var QuietChild bool

type childConfig struct {
	Quiet       bool              `json:"quiet,omitempty"`
	Addr        string            `json:"addr"`
	Dir         string            `json:"dir"`
	Persistence map[string]string `json:"persistence,omitempty"`
}

// RunChildServerIfAsked runs the in-repo server and never returns when this process was started
// as the "server" target's child; otherwise it returns at once. main and TestMain call it first.
func RunChildServerIfAsked() {
	raw := os.Getenv(childEnv)
	if raw == "" {
		return
	}
	var cc childConfig
	if err := json.Unmarshal([]byte(raw), &cc); err != nil {
		fmt.Fprintln(os.Stderr, "qbench child server:", err)
		os.Exit(2)
	}
	cfg, err := serverConfig(cc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "qbench child server:", err)
		os.Exit(2)
	}
	if err := server.ServeUntilSignal(server.New(cfg), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "qbench child server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serverConfig maps the scenario's persistence settings (Redis's names) onto the server's.
func serverConfig(cc childConfig) (server.Config, error) {
	cfg, err := serverConfigFor(cc.Addr, cc.Dir, cc.Persistence)
	cfg.Logf = func(f string, a ...any) {
		if cc.Quiet && isNotice(f) {
			return
		}
		fmt.Fprintf(os.Stderr, f+"\n", a...)
	}
	// The stall fault is DEBUG SLEEP from the runner on this machine (engine.debugSleep):
	// allowed from loopback only, as a managed redis-server is started.
	cfg.EnableDebugCommand = "local"
	return cfg, err
}

// notices are the formats of the server's log lines that report normal progress (start-up, a
// load, a save that succeeded); qbench run -q leaves them out and keeps warnings and errors.
var notices = []string{" listening on ", "DB loaded from ", "DB seeded from ", "Background saving terminated with success",
	"Background AOF rewrite finished successfully", " changes in %d seconds. Saving...", "Starting automatic rewriting of AOF"}

func isNotice(format string) bool {
	for _, n := range notices {
		if strings.Contains(format, n) {
			return true
		}
	}
	return false
}

// childServer is the in-repo server running as a child process, through engines/procs (its own
// process group, SIGKILL from the kernel if qbench dies, stopped by PID).
type childServer struct {
	exe string
	cfg childConfig
	// running is the process: atomic, since a fault restarts it while the runner reads its PID.
	running atomic.Pointer[procs.Proc]
	addr    string
	// ownDir is removed on stop.
	ownDir bool
	// mount is the power-loss file system under the data directory, when the run needs one.
	mount *lossyMount
	// stderr keeps the tail of the child's log (its standard error), for a death's report.
	stderr stderrTail
	// death is the first time the child exited on its own, kept across a kill and restart.
	death *engines.Death
}

func startChildServer(ctx context.Context, persistence map[string]string, lossy bool) (*childServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if _, err := serverConfigFor("", "", persistence); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qbench-server-")
	if err != nil {
		return nil, err
	}
	c := &childServer{exe: exe, cfg: childConfig{Quiet: QuietChild, Addr: "127.0.0.1:0", Dir: dir, Persistence: persistence}, ownDir: true}
	if lossy {
		if c.mount, err = mountLossy(dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		c.cfg.Dir = c.mount.dir
	}
	if err := c.start(ctx); err != nil {
		c.stop()
		return nil, err
	}
	if c.mount != nil {
		// Start-up files would long be on disk on a machine that has run for a while.
		if err := c.mount.fs.Sync(); err != nil {
			c.stop()
			return nil, err
		}
	}
	// Restarts come back on the same port, so clients reconnect to where they were.
	c.cfg.Addr = c.addr
	return c, nil
}

// start runs the child and reads the address it listens on from the first line of its stdout
// (its logs go to qbench's stderr, as before it ran through procs).
func (c *childServer) start(ctx context.Context) error {
	raw, _ := json.Marshal(c.cfg)
	// Never chdir into a lossyfs mount this process serves: between fork and exec the child's
	// lookup waits on this process, which waits for the child to exec.
	dir := c.cfg.Dir
	if c.mount != nil {
		dir = c.mount.base
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	er, ew, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return err
	}
	p, err := procs.Start(procs.Command{Path: c.exe, Dir: dir, Env: []string{childEnv + "=" + string(raw)}, Stdout: w, Stderr: ew})
	w.Close() // the child holds its own copies
	ew.Close()
	if err != nil {
		r.Close()
		er.Close()
		return err
	}
	// Its log still reaches qbench's stderr, and its tail is kept for a death's report.
	go func() {
		defer er.Close()
		_, _ = io.Copy(io.MultiWriter(os.Stderr, &c.stderr), er)
	}()
	c.running.Store(p)
	line := make(chan string, 1)
	go func() {
		defer r.Close()
		br := bufio.NewReader(r)
		s, _ := br.ReadString('\n')
		line <- strings.TrimSpace(s)
		// Keep reading, so the child never blocks on (or dies of) a full or closed pipe.
		_, _ = io.Copy(io.Discard, br)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			<-p.Done()
			return fmt.Errorf("the in-repo server child exited at start-up (%v; its stderr is above)", p.Err())
		}
		c.addr = addr
		return nil
	case <-time.After(10 * time.Second):
		c.kill()
		return errors.New("the in-repo server child did not start within 10 s")
	case <-ctx.Done():
		c.kill()
		return ctx.Err()
	}
}

func (c *childServer) pid() int {
	if c.proc() == nil {
		return 0
	}
	return c.proc().PID()
}

func (c *childServer) kill() {
	if d, died := deathOf(c.proc(), c.stderr.String()); died && c.death == nil {
		c.death = &d // it had exited on its own: the kill only clears it away
	}
	if c.proc() != nil {
		_ = c.proc().Kill()
		c.running.Store(nil)
	}
}

func (c *childServer) stop() error {
	if c.proc() != nil {
		_ = c.proc().Stop(5 * time.Second)
		c.running.Store(nil)
	}
	var err error
	if c.mount != nil {
		err = c.mount.unmount()
		c.cfg.Dir = c.mount.base
	}
	if c.ownDir {
		err = errors.Join(err, os.RemoveAll(c.cfg.Dir))
	}
	return err
}

func newChildEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	c, err := startChildServer(ctx, spec.Persistence, spec.LossyFS)
	if err != nil {
		return nil, err
	}
	e, err := newEngine(ctx, spec, "server", c.addr, "")
	if err != nil {
		c.stop()
		return nil, err
	}
	e.closeTarget = c.stop
	e.version = server.Version()
	e.pid = func() string { return strconv.Itoa(c.pid()) }
	ce := &childEngine{engine: e, child: c}
	if c.mount != nil {
		return &lossyChildEngine{ce}, nil
	}
	return ce, nil
}

// childEngine is the in-repo server as a child process: it can be killed and restarted.
type childEngine struct {
	*engine
	child *childServer
}

// Crash kills the child server without warning (engines.Crasher); a power loss also drops what
// it had not fsynced, which needs its directory on lossyfs.
func (e *childEngine) Crash(_ context.Context, kind engines.CrashKind) error {
	if kind == engines.PowerLoss && e.child.mount == nil {
		return errors.New("power-loss needs the data directory on lossyfs (the runner asks for it when a scenario has a power-loss fault)")
	}
	e.child.kill()
	if kind == engines.PowerLoss {
		e.child.mount.powerCut()
	}
	return nil
}

// Restart starts the child server again on the same address and directory.
func (e *childEngine) Restart(ctx context.Context) error { return e.child.start(ctx) }

// lossyChildEngine is the child server with its directory on lossyfs: its disk can also fill.
type lossyChildEngine struct{ *childEngine }

// DiskFull makes the data directory refuse writes (ENOSPC) or accept them again
// (engines.DiskFiller).
func (e *lossyChildEngine) DiskFull(_ context.Context, full bool) error {
	e.child.mount.diskFull(full)
	return nil
}

// IOError makes the data directory fail with EIO at point, or stop ("") (engines.IOFailer).
func (e *lossyChildEngine) IOError(_ context.Context, point string) error {
	return e.child.mount.ioError(point)
}

func init() {
	engines.Register(WithSection(engines.Registration{
		Name:        "server",
		Designs:     designs,
		Summary:     "the in-repo server as a child process (so a fault can kill it), with the scenario's persistence",
		New:         newChildEngine,
		Faults:      []string{"stall", "server-crash", "power-loss", "disk-full", "io-error", "fork-failure", "command"},
		Sections:    startedSections,
		Conformance: conformance,
	}))
}

// proc is the running process, or nil.
func (c *childServer) proc() *procs.Proc { return c.running.Load() }
