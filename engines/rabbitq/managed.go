package rabbitq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"qbench/engines"
	"qbench/engines/lossyfs"
	"qbench/engines/procs"
)

// managed is the engine on nodes qbench started: only it can stall, crash and restart them.
type managed struct {
	*engine
	cluster *procs.RabbitCluster
	fs      *lossyfs.FS // the message store's file system, for power loss; nil otherwise
	dir     string

	stall procs.Stall
}

func newManaged(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := optionsOf(spec, true)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qbench-rabbitmq-")
	if err != nil {
		return nil, err
	}
	cfg := procs.RabbitConfig{Dir: dir}
	var fs *lossyfs.FS
	if spec.LossyFS {
		if opts.Nodes > 1 {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("rabbitmq: power-loss needs a single node (nodes: 1), got nodes %d", opts.Nodes)
		}
		if fs, cfg.DataDir, err = lossyfs.MountUnder(dir, "store"); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	cleanup := func() {
		if fs != nil {
			fs.Unmount()
		}
		os.RemoveAll(dir)
	}
	c, err := procs.StartRabbitCluster(ctx, cfg, opts.Nodes)
	if err != nil {
		cleanup()
		return nil, err
	}
	if fs != nil {
		// What start-up wrote would long be on disk on a machine that had run for a while: make
		// it durable, so a cut takes only what the run left unsynced.
		if err := fs.Sync(); err != nil {
			c.Stop(10 * time.Second)
			cleanup()
			return nil, err
		}
	}
	e, err := newEngine("rabbitmq", spec, opts, c.URLs())
	if err != nil {
		c.Stop(10 * time.Second)
		cleanup()
		return nil, err
	}
	return &managed{engine: e, cluster: c, fs: fs, dir: dir}, nil
}

// Facts adds the nodes' own: their count, start-up times, and a single node's Erlang VM PID (for
// its CPU and memory over the run).
func (m *managed) Facts(ctx context.Context) engines.Facts {
	f := m.engine.Facts(ctx)
	f.Settings["nodes"] = strconv.Itoa(len(m.cluster.Nodes))
	var started []string
	for _, n := range m.cluster.Nodes {
		started = append(started, n.StartedIn().Round(time.Millisecond).String())
	}
	f.Settings["started_in"] = strings.Join(started, ",")
	if len(m.cluster.Nodes) == 1 {
		if pid := m.cluster.Nodes[0].VMPID(); pid > 0 {
			f.Settings["pid"] = strconv.Itoa(pid)
		}
	}
	return f
}

// Stall stops every node's processes (SIGSTOP) for d; it returns once they are stopped.
func (m *managed) Stall(ctx context.Context, d time.Duration) error {
	return m.stall.Start(m.cluster.Pausable(), d)
}

// Command runs rabbitmqctl with args against every node (a command fault): e.g.
// [set_vm_memory_high_watermark, "0.000001"] raises the memory alarm, which blocks publishers.
func (m *managed) Command(ctx context.Context, args ...string) (string, error) {
	var out []string
	for _, n := range m.cluster.Nodes {
		o, err := n.Ctl(ctx, args...)
		if err != nil {
			return strings.Join(out, ""), err
		}
		out = append(out, o)
	}
	return strings.Join(out, ""), nil
}

// DiskFull raises RabbitMQ's disk alarm on every node (full) or clears it by setting the
// free-disk limit back to what the nodes were started with (procs.RabbitDiskFreeLimit). This is the broker's own reaction to a filling disk: its disk monitor
// compares the data directory's free space with disk_free_limit and, below it, blocks every
// publishing connection until space returns; consumers go on. Setting the limit above the size
// of the file system holding the store makes the free space fall below it at once (the monitor
// checks when the limit is set), without writing a byte. Making the store's writes fail with
// ENOSPC instead (the power-loss file system's fail-writes) is not the alarm: the broker's disk
// monitor reads free space with df, which such a file system still reports, and a store whose
// writes fail is a store crashing, which the alarm exists to prevent.
func (m *managed) DiskFull(ctx context.Context, full bool) error {
	limit := strconv.Itoa(procs.RabbitDiskFreeLimit)
	if full {
		var st syscall.Statfs_t
		if err := syscall.Statfs(m.dir, &st); err != nil {
			return fmt.Errorf("rabbitmq: disk alarm: %w", err)
		}
		// Twice the file system's size: no free space reaches it.
		limit = strconv.FormatUint(2*st.Blocks*uint64(st.Bsize), 10)
	}
	var errs []error
	for _, n := range m.cluster.Nodes {
		if _, err := n.Ctl(ctx, "set_disk_free_limit", limit); err != nil {
			errs = append(errs, fmt.Errorf("rabbitmq: disk alarm: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Crash kills every node (SIGKILL); a power loss also drops what the store had not fsynced.
func (m *managed) Crash(ctx context.Context, kind engines.CrashKind) error {
	if kind != engines.ProcessCrash && (kind != engines.PowerLoss || m.fs == nil) {
		return fmt.Errorf("rabbitmq: crash kind %q not supported here (only %q, and %q with the store on lossyfs)", kind, engines.ProcessCrash, engines.PowerLoss)
	}
	if err := m.cluster.Kill(); err != nil {
		return err
	}
	if kind == engines.PowerLoss {
		m.fs.Cut()
		m.fs.Recover()
	}
	return nil
}

// Restart starts the nodes again on their stores; clients dial again on their next call.
func (m *managed) Restart(ctx context.Context) error { return m.cluster.Start(ctx) }

// Close closes the clients, stops the nodes and the port mapper, unmounts the store and removes
// the directory.
func (m *managed) Close() error {
	m.stall.End()
	err := m.engine.Close()
	err = errors.Join(err, m.cluster.Stop(15*time.Second))
	if m.fs != nil {
		err = errors.Join(err, m.fs.Unmount())
	}
	return errors.Join(err, os.RemoveAll(m.dir))
}
