package natsq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"qbench/engines"
	"qbench/engines/lossyfs"
	"qbench/engines/procs"
)

// managed is the engine on nats-server nodes qbench started: only it can stall, crash and
// restart them.
type managed struct {
	*engine
	cluster *procs.NATSCluster
	fs      *lossyfs.FS // the store's file system, for power loss; nil otherwise
	dir     string

	stall procs.Stall
}

func newManaged(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := optionsOf(spec.Options, true)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qbench-nats-")
	if err != nil {
		return nil, err
	}
	cfg := procs.NATSConfig{Dir: dir, SyncInterval: opts.SyncInterval}
	var fs *lossyfs.FS
	if spec.LossyFS {
		if opts.Servers > 1 {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("jetstream: power-loss and disk-full need a single server (servers: 1), got servers %d", opts.Servers)
		}
		// The store is on the power-loss file system; the configuration and log stay outside
		// it (this process serves the mount).
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
	c, err := procs.StartNATSCluster(ctx, cfg, opts.Servers)
	if err != nil {
		cleanup()
		return nil, err
	}
	e, err := newEngine("jetstream", spec, opts, strings.Join(c.URLs(), ","))
	if err != nil {
		c.Kill()
		cleanup()
		return nil, err
	}
	return &managed{engine: e, cluster: c, fs: fs, dir: dir}, nil
}

// Setup waits, on a cluster, until its JetStream can place the stream (a new cluster elects its
// meta leader after the nodes report healthy).
func (m *managed) Setup(ctx context.Context) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		// Each attempt is bounded: a request the meta group cannot answer yet waits for its
		// context, and a caller's may be long.
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := m.engine.Setup(actx)
		cancel()
		if err == nil || len(m.cluster.Nodes) == 1 || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Facts adds the nodes' own facts to the engine's.
func (m *managed) Facts(ctx context.Context) engines.Facts {
	f := m.engine.Facts(ctx)
	settingsOfNodes(&f, m)
	return f
}

// Stall stops every node's process (SIGSTOP) for d: clients' requests wait unanswered, as
// behind a frozen VM or a long pause. It returns once the nodes are stopped.
func (m *managed) Stall(ctx context.Context, d time.Duration) error {
	return m.stall.Start(m.cluster.Pausable(), d)
}

// Crash kills every node at once (SIGKILL). A power loss also drops every byte the store had
// not fsynced, which needs the store on lossyfs (the runner asks for it for a power-loss fault).
func (m *managed) Crash(ctx context.Context, kind engines.CrashKind) error {
	if kind != engines.ProcessCrash && (kind != engines.PowerLoss || m.fs == nil) {
		return fmt.Errorf("jetstream: crash kind %q not supported here (only %q, and %q with the store on lossyfs)", kind, engines.ProcessCrash, engines.PowerLoss)
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

// Restart starts the nodes again on their stores and ports; clients reconnect by themselves.
func (m *managed) Restart(ctx context.Context) error {
	return m.cluster.Start(ctx)
}

// Close closes the clients, stops the nodes, unmounts the store and removes the directory.
func (m *managed) Close() error {
	m.stall.End()
	err := m.engine.Close()
	err = errors.Join(err, m.cluster.Stop(5*time.Second))
	if m.fs != nil {
		err = errors.Join(err, m.fs.Unmount())
	}
	return errors.Join(err, os.RemoveAll(m.dir))
}
