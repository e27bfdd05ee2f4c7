// The managed target: engine "kafka" on a broker or KRaft cluster qbench starts, and the faults
// only it can carry out (leader kills and node restarts are in leader.go).

package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"qbench/engines"
	"qbench/engines/lossyfs"
	"qbench/engines/procs"
	"sync/atomic"
	"time"
)

func newManaged(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := optionsOf(spec, true)
	if err != nil {
		return nil, err
	}
	home, err := procs.KafkaHome()
	if err != nil {
		return nil, err
	}
	// QBENCH_KAFKA_DATA chooses the file system under test; the default is the temp dir.
	dir, err := os.MkdirTemp(os.Getenv("QBENCH_KAFKA_DATA"), "qbench-kafka-")
	if err != nil {
		return nil, err
	}
	// For power-loss faults the broker's log directory (DIR/data) is a lossyfs mount, which
	// forgets unsynced writes. Its configuration and log stay outside the mount: this process
	// serves the mount, and must neither chdir a child into it nor hold files open on it.
	var fs *lossyfs.FS
	if spec.LossyFS && opts.brokers > 1 {
		// One lossyfs mount per node, cut together, would be a correlated power loss of a
		// whole cluster: not built yet, so refused rather than half done.
		os.RemoveAll(dir)
		return nil, fmt.Errorf("kafka: power-loss needs a single broker (brokers: 1), got brokers %d", opts.brokers)
	}
	if spec.LossyFS {
		backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "data")
		if err := errors.Join(os.Mkdir(backing, 0o755), os.Mkdir(mnt, 0o755)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if fs, err = lossyfs.Mount(backing, mnt, lossyfs.Options{}); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	c, err := procs.StartKafkaCluster(ctx, procs.KafkaConfig{Home: home, Dir: dir, Settings: opts.broker, Probe: Probe}, opts.brokers)
	if err == nil {
		err = waitBrokers(ctx, c.Addrs(), opts.brokers)
		if err != nil {
			c.Kill()
		}
	}
	if err != nil {
		if fs != nil {
			fs.Unmount()
		}
		os.RemoveAll(dir)
		return nil, err
	}
	if fs != nil {
		// What formatting and start-up wrote would long be on disk on a machine that has run
		// for a while (Kafka's format does not fsync its bootstrap checkpoint): make it durable,
		// so a power cut takes only what the run itself left unsynced.
		if err := fs.Sync(); err != nil {
			c.Stop(10 * time.Second)
			fs.Unmount()
			os.RemoveAll(dir)
			return nil, err
		}
	}
	e := newEngine("kafka", spec, opts, c.Addrs(), c)
	return &managed{engine: e, fs: fs, dir: dir}, nil
}

// managed is the engine on brokers it started itself; only it can crash them.
type managed struct {
	*engine
	fs  *lossyfs.FS // the broker's data file system, for power loss; nil otherwise
	dir string
	// behind is how long the next KillLeader with crash stops the partition's followers first
	// (HoldReplicas), in nanoseconds.
	behind atomic.Int64
}

// Crash kills every broker's process group with SIGKILL at once (a whole cluster: a data
// centre's power, or a bad deploy). The page cache survives, so what the
// broker had written (not necessarily fsynced) is still there on Restart; a power loss also drops
// every unsynced byte, which needs the data on lossyfs (the runner asks for it when a scenario
// has a power-loss fault).
func (m *managed) Crash(ctx context.Context, kind engines.CrashKind) error {
	if kind != engines.ProcessCrash && (kind != engines.PowerLoss || m.fs == nil) {
		return fmt.Errorf("kafka: crash kind %q not supported here (only %q, and %q with the data on lossyfs)", kind, engines.ProcessCrash, engines.PowerLoss)
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

// Close stops the broker, then unmounts its file system and removes its directory.
func (m *managed) Close() error {
	err := m.engine.Close()
	if m.fs != nil {
		err = errors.Join(err, m.fs.Unmount())
	}
	return errors.Join(err, os.RemoveAll(m.dir))
}

// Restart starts the brokers again on the same directories and ports, which runs Kafka's log
// recovery after a crash, and returns once they answer.
func (m *managed) Restart(ctx context.Context) error {
	if err := m.cluster.Start(ctx); err != nil {
		return err
	}
	// Pooled connections point at the dead process; drop them now rather than on first use.
	m.transport.CloseIdleConnections()
	return nil
}
