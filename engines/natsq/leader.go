package natsq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"qbench/engines"
)

// leaderTimeout bounds the wait for a replicated stream to elect a new leader after its leader
// died (JetStream's Raft elects one within a few seconds when a majority is left).
const leaderTimeout = 30 * time.Second

// streamLeader is the 1-based node leading the run's stream, as the node the admin connection
// reaches says; 0 when it cannot say (no leader yet, or no answer within a second).
func (m *managed) streamLeader(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	s, err := m.js.Stream(ctx, m.stream)
	if err != nil {
		return 0
	}
	ci := s.CachedInfo().Cluster
	if ci == nil {
		return 0
	}
	for i, n := range m.cluster.Nodes {
		if n.Name() == ci.Leader {
			return i + 1
		}
	}
	return 0
}

// KillLeader stops the node leading the run's stream (engines.LeaderKiller): SIGKILL when
// crash, a clean shutdown otherwise. It returns once another node leads the stream, or at once
// with NewLeader 0 when the stream has one replica (no other node holds it), or once
// leaderTimeout has passed (no majority left to elect one). The node stays down until
// RestartNode.
func (m *managed) KillLeader(ctx context.Context, crash bool) (engines.LeaderChange, error) {
	if m.spec.Design == DesignCore || len(m.cluster.Nodes) < 3 {
		return engines.LeaderChange{}, errors.New("jetstream: a leader kill needs a stream (workqueue or limits) on servers: 3")
	}
	old := 0
	for deadline := time.Now().Add(5 * time.Second); old == 0 && time.Now().Before(deadline) && ctx.Err() == nil; {
		if old = m.streamLeader(ctx); old == 0 {
			sleep(ctx, 100*time.Millisecond)
		}
	}
	if old == 0 {
		return engines.LeaderChange{}, fmt.Errorf("jetstream: no leader known for stream %s", m.stream)
	}
	n := m.cluster.Nodes[old-1]
	var err error
	if crash {
		err = n.Kill()
	} else {
		err = n.Stop(30 * time.Second)
	}
	ch := engines.LeaderChange{Node: old}
	if err != nil || m.opts.Replicas < 2 {
		return ch, err
	}
	for deadline := time.Now().Add(leaderTimeout); time.Now().Before(deadline) && ctx.Err() == nil; {
		if l := m.streamLeader(ctx); l != 0 && l != old {
			ch.NewLeader = l
			return ch, nil
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return ch, nil
}

// RestartNode starts node (1-based) again on its store and ports, and returns once its
// JetStream reports healthy; it then catches its replicas up from the leader by itself.
func (m *managed) RestartNode(ctx context.Context, node int) error {
	if node < 1 || node > len(m.cluster.Nodes) {
		return fmt.Errorf("jetstream: no node %d", node)
	}
	return m.cluster.Nodes[node-1].Start(ctx)
}

// DiskFull makes the store refuse writes with ENOSPC (engines.DiskFiller), or accept them
// again. It needs the store on the power-loss file system, which the runner asks for when the
// scenario has a disk-full fault.
func (m *managed) DiskFull(_ context.Context, full bool) error {
	if m.fs == nil {
		return errors.New("jetstream: disk-full needs the store on the power-loss file system (servers: 1)")
	}
	m.fs.FailWrites(full)
	return nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
