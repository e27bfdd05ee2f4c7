package procs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// rabbitServer is the Debian package's start script; rabbitmq-server on PATH is a wrapper that
// insists on running as the rabbitmq user.
const rabbitServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// RabbitServerPath finds the broker's start script.
func RabbitServerPath() (string, error) {
	if _, err := os.Stat(rabbitServer); err == nil {
		return rabbitServer, nil
	}
	return "", fmt.Errorf("rabbitmq-server not found at %s (install Debian's rabbitmq-server package)", rabbitServer)
}

// RabbitDiskFreeLimit is the free-disk limit every node is configured with, in bytes: the
// broker's own default (50 MB), written out so that a disk alarm raised by setting the limit
// higher can be cleared by setting it back to a known value.
const RabbitDiskFreeLimit = 50_000_000

// RabbitConfig describes a RabbitMQ node, alone or one of a cluster on this machine.
type RabbitConfig struct {
	// Dir holds the nodes' directories (node-i: rabbitmq.conf, mnesia/, log/) and the shared
	// home with the Erlang cookie.
	Dir string
	// DataDir, when set, holds the nodes' mnesia (message store) directories instead of Dir: a
	// lossyfs mount, for power loss.
	DataDir string
	// StartTimeout bounds start-up until every node accepts AMQP connections; zero means 60 s, and
	// 30 s more for each further node.
	StartTimeout time.Duration
}

// Rabbit is one RabbitMQ node qbench started.
type Rabbit struct {
	cfg      RabbitConfig
	name     string // Erlang node name, qbench-<id>-<i>@localhost
	dir      string
	mnesia   string
	port     int
	distPort int
	env      []string
	// running is the process: atomic, since a fault restarts the node while the runner reads
	// its PID for the run's facts.
	running atomic.Pointer[Proc]
	// startedIn is how long the last start took until the node accepted connections.
	// Atomic: a fault restarts the node while the runner reads the facts.
	startedIn atomic.Int64
}

// RabbitCluster is n nodes started together on loopback, with an Erlang port mapper of their
// own (never the machine's, which listens on every interface).
type RabbitCluster struct {
	Nodes []*Rabbit
	epmd  *Proc
}

// StartRabbitCluster writes each node's configuration and starts them, returning once every
// node accepts connections on its AMQP port.
func StartRabbitCluster(ctx context.Context, cfg RabbitConfig, n int) (*RabbitCluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("procs: a RabbitMQ cluster needs at least one node (got %d)", n)
	}
	if _, err := RabbitServerPath(); err != nil {
		return nil, err
	}
	epmdBin, err := exec.LookPath("epmd")
	if err != nil {
		return nil, fmt.Errorf("procs: epmd (Erlang) not found: %w", err)
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = time.Duration(60+30*(n-1)) * time.Second
	}
	ports, err := FreePorts(1 + 2*n)
	if err != nil {
		return nil, err
	}
	home := filepath.Join(cfg.Dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	var cookie [20]byte
	_, _ = rand.Read(cookie[:])
	if err := os.WriteFile(filepath.Join(home, ".erlang.cookie"), []byte(strings.ToUpper(hex.EncodeToString(cookie[:]))), 0o400); err != nil {
		return nil, err
	}
	epmdPort := ports[0]
	c := &RabbitCluster{}
	if c.epmd, err = Start(Command{Path: epmdBin, Args: []string{"-address", "127.0.0.1", "-port", strconv.Itoa(epmdPort)}}); err != nil {
		return nil, err
	}
	id := hex.EncodeToString(cookie[:3])
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("qbench-%s-%d@localhost", id, i+1))
	}
	for i := range n {
		r := &Rabbit{cfg: cfg, name: names[i], dir: filepath.Join(cfg.Dir, "node-"+strconv.Itoa(i+1)),
			port: ports[1+2*i], distPort: ports[2+2*i]}
		r.mnesia = filepath.Join(r.dir, "mnesia")
		if cfg.DataDir != "" {
			r.mnesia = filepath.Join(cfg.DataDir, "node-"+strconv.Itoa(i+1))
		}
		if err := errors.Join(os.MkdirAll(r.dir, 0o755), os.MkdirAll(r.mnesia, 0o755)); err != nil {
			c.Kill()
			return nil, err
		}
		conf := fmt.Sprintf("listeners.tcp.1 = 127.0.0.1:%d\nloopback_users = none\ndisk_free_limit.absolute = %d\n", r.port, RabbitDiskFreeLimit)
		if n > 1 {
			conf += "cluster_formation.peer_discovery_backend = classic_config\n"
			for j, nm := range names {
				conf += fmt.Sprintf("cluster_formation.classic_config.nodes.%d = %s\n", j+1, nm)
			}
		}
		if err := errors.Join(writeDurably(filepath.Join(r.dir, "rabbitmq.conf"), []byte(conf)),
			writeDurably(filepath.Join(r.dir, "enabled_plugins"), []byte("[].\n"))); err != nil {
			c.Kill()
			return nil, err
		}
		r.env = []string{
			"HOME=" + home, "ERL_EPMD_PORT=" + strconv.Itoa(epmdPort), "ERL_EPMD_ADDRESS=127.0.0.1",
			"RABBITMQ_NODENAME=" + r.name, "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
			"RABBITMQ_NODE_PORT=" + strconv.Itoa(r.port), "RABBITMQ_DIST_PORT=" + strconv.Itoa(r.distPort),
			"RABBITMQ_MNESIA_BASE=" + r.mnesia, "RABBITMQ_LOG_BASE=" + filepath.Join(r.dir, "log"),
			"RABBITMQ_CONFIG_FILE=" + filepath.Join(r.dir, "rabbitmq.conf"),
			"RABBITMQ_ENABLED_PLUGINS_FILE=" + filepath.Join(r.dir, "enabled_plugins"),
			"RABBITMQ_PID_FILE=" + filepath.Join(r.dir, "pid"),
			// Neither the machine's /etc/rabbitmq/rabbitmq-env.conf nor its defaults apply.
			"RABBITMQ_CONF_ENV_FILE=/dev/null",
		}
		c.Nodes = append(c.Nodes, r)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		c.Kill()
		return nil, err
	}
	return c, nil
}

// Start starts every node that is not running (all at once: a cluster's nodes wait for each
// other at boot) and waits until each accepts connections.
func (c *RabbitCluster) Start(ctx context.Context) error {
	errs := make(chan error, len(c.Nodes))
	for _, r := range c.Nodes {
		go func() { errs <- r.Start(ctx) }()
	}
	var all []error
	for range c.Nodes {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// Start starts the node on its directory and ports and waits until its AMQP port answers.
func (r *Rabbit) Start(ctx context.Context) error {
	if r.proc() != nil && !r.proc().Exited() {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.cfg.StartTimeout)
		defer cancel()
	}
	began := time.Now()
	p, err := Start(Command{Path: rabbitServer, Env: r.env, Log: filepath.Join(r.dir, "rabbitmq.out")})
	if err != nil {
		return err
	}
	r.running.Store(p)
	if err := p.WaitReady(ctx, 100*time.Millisecond, func(ctx context.Context) error { return dialProbe(ctx, r.Addr()) }); err != nil {
		_ = p.Kill()
		return fmt.Errorf("procs: rabbitmq %s: %w; output tail:\n%s", r.name, err, p.LogTail(1500))
	}
	r.startedIn.Store(int64(time.Since(began)))
	return nil
}

// VMPID is the node's Erlang VM process ID from its PID file (the process qbench waits for is
// the start script, whose child the VM is); 0 when not known.
func (r *Rabbit) VMPID() int {
	if r.PID() == 0 {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(r.dir, "pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Ctl runs rabbitmqctl against the node (its name, cookie and port mapper) and returns its
// output: set_vm_memory_high_watermark, set_disk_free_limit, list_queues ...
func (r *Rabbit) Ctl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(rabbitServer), "rabbitmqctl"), append([]string{"-n", r.name}, args...)...)
	cmd.Env = append(os.Environ(), r.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("procs: rabbitmqctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Addr is the node's AMQP address, 127.0.0.1:<port>.
func (r *Rabbit) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// URL is the node's AMQP URL with the default guest user (loopback only).
func (r *Rabbit) URL() string { return "amqp://guest:guest@" + r.Addr() + "/" }

// Name is the node's Erlang name.
func (r *Rabbit) Name() string { return r.name }

// PID is the node's process ID (the Erlang VM's), 0 when it is not running.
func (r *Rabbit) PID() int {
	if r.proc() == nil || r.proc().Exited() {
		return 0
	}
	return r.proc().PID()
}

// Kill crashes the node: SIGKILL to its process group. Its directory stays for Start.
func (r *Rabbit) Kill() error {
	if r.proc() == nil {
		return nil
	}
	return errors.Join(r.proc().Kill(), r.waitGone())
}

// Stop shuts the node down (SIGTERM), killing it after grace.
func (r *Rabbit) Stop(grace time.Duration) error {
	if r.proc() == nil {
		return nil
	}
	return errors.Join(r.proc().Stop(grace), r.waitGone())
}

// waitGone waits until the node's AMQP port refuses connections. The process qbench waits for
// is the start script; the Erlang VM, its child in the same process group, gets the signal too
// but may take a moment longer to exit, and a restart must not find the old node listening.
func (r *Rabbit) waitGone() error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := dialProbe(ctx, r.Addr())
		cancel()
		if err != nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("procs: rabbitmq %s still listening on %s after it was stopped", r.name, r.Addr())
}

// Pause stops the node's processes (SIGSTOP); Resume continues them.
func (r *Rabbit) Pause() error  { return r.proc().Signal(syscall.SIGSTOP) }
func (r *Rabbit) Resume() error { return r.proc().Signal(syscall.SIGCONT) }

// LogTail is the end of the node's output.
func (r *Rabbit) LogTail(n int) string {
	if r.proc() == nil {
		return ""
	}
	return r.proc().LogTail(n)
}

// URLs are every node's AMQP URL.
func (c *RabbitCluster) URLs() []string {
	out := make([]string, len(c.Nodes))
	for i, r := range c.Nodes {
		out[i] = r.URL()
	}
	return out
}

// Kill crashes every node at once; the port mapper stays for a restart.
func (c *RabbitCluster) Kill() error {
	var errs []error
	for _, r := range c.Nodes {
		errs = append(errs, r.Kill())
	}
	return errors.Join(errs...)
}

// Stop stops every node, then the port mapper.
func (c *RabbitCluster) Stop(grace time.Duration) error {
	var errs []error
	for _, r := range c.Nodes {
		errs = append(errs, r.Stop(grace))
	}
	if c.epmd != nil {
		errs = append(errs, c.epmd.Kill())
	}
	return errors.Join(errs...)
}

// Pausable is every node, for a Stall.
func (c *RabbitCluster) Pausable() []Pausable {
	out := make([]Pausable, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n
	}
	return out
}

// StartedIn is how long the last start took until the node accepted connections.
func (r *Rabbit) StartedIn() time.Duration { return time.Duration(r.startedIn.Load()) }

// proc is the running process, or nil.
func (r *Rabbit) proc() *Proc { return r.running.Load() }
