package procs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// NATSServerVersion is the nats-server qbench builds for its tests and managed runs (.ci/test
// installs it with the Go toolchain into NATSBinDir).
const NATSServerVersion = "v2.12.1"

// NATSBinDir is where .ci/test installs nats-server when it is not on PATH.
func NATSBinDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "qbench", "bin")
}

// NATSServerPath finds the nats-server binary: on PATH, or in NATSBinDir.
func NATSServerPath() (string, error) {
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	p := filepath.Join(NATSBinDir(), "nats-server")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("nats-server not found on PATH nor in %s (install it: GOBIN=%s go install github.com/nats-io/nats-server/v2@%s)",
		NATSBinDir(), NATSBinDir(), NATSServerVersion)
}

// NATSConfig describes a nats-server with JetStream, alone or as one node of a cluster.
type NATSConfig struct {
	// Dir is the node's own directory: nats.conf, nats.log and the JetStream store (DataDir).
	Dir string
	// DataDir is the JetStream store directory; empty means Dir/data. It may be a lossyfs
	// mount outside Dir.
	DataDir string
	// SyncInterval is JetStream's sync_interval: "" keeps the server's default (2 minutes),
	// "always" fsyncs every write, or a Go duration.
	SyncInterval string
	// StartTimeout bounds start-up until the node is healthy; zero means 30 s.
	StartTimeout time.Duration
}

// NATS is one nats-server node qbench started.
type NATS struct {
	cfg         NATSConfig
	name        string
	port, mport int
	routes      []int // every node's cluster port, for a cluster; empty alone
	clusterPort int
	bin         string
	// running is the process: atomic, since a fault restarts the node while the runner reads
	// its PID for the run's facts.
	running atomic.Pointer[Proc]
	// startedIn is how long the last start took until the node was healthy.
	// Atomic: a fault restarts the node while the runner reads the facts.
	startedIn atomic.Int64
}

// NATSCluster is n nodes started together; one node alone is a cluster of one.
type NATSCluster struct {
	Nodes []*NATS
}

// StartNATSCluster writes each node's configuration under cfg.Dir (node-i for a cluster) and
// starts them on free loopback ports, returning once every node reports JetStream healthy.
func StartNATSCluster(ctx context.Context, cfg NATSConfig, n int) (*NATSCluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("procs: a NATS cluster needs at least one node (got %d)", n)
	}
	bin, err := NATSServerPath()
	if err != nil {
		return nil, err
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	ports, err := FreePorts(3 * n)
	if err != nil {
		return nil, err
	}
	var routes []int
	if n > 1 {
		for i := range n {
			routes = append(routes, ports[3*i+2])
		}
	}
	c := &NATSCluster{}
	for i := range n {
		nc := cfg
		if n > 1 {
			nc.Dir = filepath.Join(cfg.Dir, "node-"+strconv.Itoa(i+1))
			if cfg.DataDir != "" {
				nc.DataDir = filepath.Join(cfg.DataDir, "node-"+strconv.Itoa(i+1))
			}
			if err := os.MkdirAll(nc.Dir, 0o755); err != nil {
				return nil, err
			}
		}
		if nc.DataDir == "" {
			nc.DataDir = filepath.Join(nc.Dir, "data")
		}
		if err := os.MkdirAll(nc.DataDir, 0o755); err != nil {
			return nil, err
		}
		node := &NATS{cfg: nc, name: "n" + strconv.Itoa(i+1), port: ports[3*i], mport: ports[3*i+1],
			clusterPort: ports[3*i+2], routes: routes, bin: bin}
		if err := writeDurably(node.confPath(), []byte(node.conf())); err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, node)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := c.each(func(s *NATS) error { return s.Start(ctx) }); err != nil {
		_ = c.Kill()
		return nil, err
	}
	return c, nil
}

// conf is the node's configuration file: loopback only, JetStream on, the cluster's routes.
func (s *NATS) conf() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %s\nlisten: 127.0.0.1:%d\nhttp: 127.0.0.1:%d\n", s.name, s.port, s.mport)
	fmt.Fprintf(&b, "jetstream {\n  store_dir: %q\n", s.cfg.DataDir)
	if s.cfg.SyncInterval != "" {
		fmt.Fprintf(&b, "  sync_interval: %s\n", s.cfg.SyncInterval)
	}
	b.WriteString("}\n")
	if len(s.routes) > 0 {
		fmt.Fprintf(&b, "cluster {\n  name: qbench\n  listen: 127.0.0.1:%d\n  routes: [\n", s.clusterPort)
		for _, p := range s.routes {
			fmt.Fprintf(&b, "    nats-route://127.0.0.1:%d\n", p)
		}
		b.WriteString("  ]\n}\n")
	}
	return b.String()
}

func (s *NATS) confPath() string { return filepath.Join(s.cfg.Dir, "nats.conf") }
func (s *NATS) logPath() string  { return filepath.Join(s.cfg.Dir, "nats.log") }

// Start starts the node on its existing directory and ports (after StartNATSCluster or Kill)
// and waits until its JetStream reports healthy.
func (s *NATS) Start(ctx context.Context) error {
	if s.proc() != nil && !s.proc().Exited() {
		return fmt.Errorf("procs: nats-server %s already running (pid %d)", s.name, s.proc().PID())
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.StartTimeout)
		defer cancel()
	}
	began := time.Now()
	p, err := Start(Command{Path: s.bin, Args: []string{"-c", s.confPath()}, Log: s.logPath()})
	if err != nil {
		return err
	}
	s.running.Store(p)
	if err := p.WaitReady(ctx, 50*time.Millisecond, s.healthy); err != nil {
		_ = p.Kill()
		return fmt.Errorf("procs: nats-server %s: %w; log tail:\n%s", s.name, err, s.LogTail(1500))
	}
	s.startedIn.Store(int64(time.Since(began)))
	return nil
}

// healthy asks the monitoring port's /healthz?js-server-only=true, which answers 200 once
// JetStream is up (in a cluster, with its meta group). It does not wait for every stream: a
// stream that could not be recovered after a crash is the engine's outcome for the run to
// count, not a server that failed to start.
func (s *NATS) healthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/healthz?js-server-only=true", s.mport), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz: %s", resp.Status)
	}
	return nil
}

// Healthz asks the monitoring port's full /healthz (JetStream, its meta group, and every stream
// and consumer this node holds current): nil when it answers 200, else the server's reason
// (such as "JETSTREAM stream 'A > S' is not current"), or the dial's error when the node is
// down (errors.Is(err, syscall.ECONNREFUSED)).
func (s *NATS) Healthz(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/healthz", s.mport), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var body struct {
		Error string `json:"error"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body) == nil && body.Error != "" {
		return errors.New(body.Error)
	}
	return fmt.Errorf("healthz: %s", resp.Status)
}

// Addr is the client address, 127.0.0.1:<port>.
func (s *NATS) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the client URL, nats://127.0.0.1:<port>.
func (s *NATS) URL() string { return "nats://" + s.Addr() }

// Name is the node's server_name (n1, n2, ...).
func (s *NATS) Name() string { return s.name }

// PID is the node's process ID, 0 when it is not running.
func (s *NATS) PID() int {
	if s.proc() == nil || s.proc().Exited() {
		return 0
	}
	return s.proc().PID()
}

// Kill crashes the node: SIGKILL to its process group. Its directory stays for Start.
func (s *NATS) Kill() error {
	if s.proc() == nil {
		return nil
	}
	return s.proc().Kill()
}

// Stop shuts the node down (SIGTERM: nats-server flushes its store), killing it after grace.
func (s *NATS) Stop(grace time.Duration) error {
	if s.proc() == nil {
		return nil
	}
	return s.proc().Stop(grace)
}

// Pause stops the node's processes (SIGSTOP) without killing them: a stall, as a long GC pause
// or a frozen VM would be. Resume continues them.
func (s *NATS) Pause() error  { return s.proc().Signal(syscall.SIGSTOP) }
func (s *NATS) Resume() error { return s.proc().Signal(syscall.SIGCONT) }

// LogTail returns the end of the node's log.
func (s *NATS) LogTail(n int) string { return tail(s.logPath(), n) }

// URLs are every node's client URL.
func (c *NATSCluster) URLs() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.URL()
	}
	return out
}

// Start starts every node again (after Kill) and waits until each is healthy.
func (c *NATSCluster) Start(ctx context.Context) error {
	return c.each(func(s *NATS) error { return s.Start(ctx) })
}

// Kill crashes every node at once.
func (c *NATSCluster) Kill() error { return c.each(func(s *NATS) error { return s.Kill() }) }

// Stop stops every node.
func (c *NATSCluster) Stop(grace time.Duration) error {
	return c.each(func(s *NATS) error { return s.Stop(grace) })
}

// each runs f on every node concurrently and joins the errors.
func (c *NATSCluster) each(f func(s *NATS) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(c.Nodes))
	for i, s := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Pausable is every node, for a Stall.
func (c *NATSCluster) Pausable() []Pausable {
	out := make([]Pausable, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n
	}
	return out
}

// StartedIn is how long the last start took until the node was healthy.
func (s *NATS) StartedIn() time.Duration { return time.Duration(s.startedIn.Load()) }

// proc is the running process, or nil.
func (s *NATS) proc() *Proc { return s.running.Load() }
