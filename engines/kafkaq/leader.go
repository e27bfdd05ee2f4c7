package kafkaq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"qbench/engines"
	"qbench/engines/procs"
)

// leaderWait bounds how long KillLeader waits for the controller to elect a new leader: the
// controller fences a silent broker after broker.session.timeout.ms (3 s here), then elects;
// when the dead broker was also the active controller, the quorum elects a controller first.
// That took 6 s on a quiet 2-core machine and 13 s on a loaded one.
const leaderWait = 60 * time.Second

// KillLeader stops the broker leading partition 0 of the run's topic (engines.LeaderKiller),
// found through metadata as a client would find it: SIGKILL to its process group when crash
// (partition-leader-kill), a clean shutdown, which hands leadership over first, otherwise
// (node-restart). It returns once metadata names another leader, or at once when no other
// replica was in sync (a single broker, or a shrunken ISR with unclean election off), since none
// will be elected. The node stays down until RestartNode.
func (m *managed) KillLeader(ctx context.Context, crash bool) (engines.LeaderChange, error) {
	leader, isr, err := m.partitionLeader(ctx, 0)
	if err != nil {
		return engines.LeaderChange{}, fmt.Errorf("kafka: find partition 0's leader: %w", err)
	}
	node := m.cluster.Node(leader)
	if node == nil {
		return engines.LeaderChange{}, fmt.Errorf("kafka: partition 0 of %s has no leader qbench started (leader %d)", m.topic, leader)
	}
	if behind := time.Duration(m.behind.Load()); crash && behind > 0 {
		err = m.killBehind(ctx, node, leader, isr, behind)
	} else if crash {
		err = node.Kill()
	} else {
		err = node.Stop(30 * time.Second)
	}
	if err != nil {
		return engines.LeaderChange{Node: leader}, err
	}
	// Pooled connections to the dead broker would each cost a failed round trip.
	m.transport.CloseIdleConnections()
	ch := engines.LeaderChange{Node: leader}
	if !slices.ContainsFunc(isr, func(id int) bool { return id != leader }) {
		return ch, nil
	}
	wctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	for {
		// Errors are expected while the bootstrap list still names the dead broker.
		if l, _, err := m.partitionLeader(wctx, 0); err == nil && l != 0 && l != leader {
			ch.NewLeader = l
			return ch, nil
		}
		select {
		case <-wctx.Done():
			return ch, fmt.Errorf("kafka: no new leader for partition 0 within %s after broker %d stopped", leaderWait, leader)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RestartNode starts a broker stopped by KillLeader again on its directory and ports (log
// recovery after a SIGKILL, then catching up from the leader) and returns once it answers.
func (m *managed) RestartNode(ctx context.Context, id int) error {
	node := m.cluster.Node(id)
	if node == nil {
		return fmt.Errorf("kafka: no broker %d", id)
	}
	if err := node.Start(ctx); err != nil {
		return err
	}
	m.transport.CloseIdleConnections()
	return nil
}

// HoldReplicas sets how long the next partition-leader-kill stops partition 0's followers before
// it kills the leader (engines.ReplicaHolder; the runner calls it before each fault).
func (m *managed) HoldReplicas(d time.Duration) { m.behind.Store(int64(d)) }

// killBehind stops (SIGSTOP) the in-sync followers of partition 0 for behind, kills the leader
// and continues them. A stopped follower fetches nothing, so what the leader appends meanwhile
// is on no other broker when it dies: with acks=1 it was acknowledged, and is lost once a
// follower (still in the ISR: the stop is shorter than replica.lag.time.max.ms, and the
// controller quorum cannot shrink it while two of three voters are stopped) is elected; with
// acks=all it never was. Fetching is pull, so unlike a Redis replica's socket buffer nothing
// sent before the stop is left to read after it.
func (m *managed) killBehind(ctx context.Context, leader *procs.Kafka, id int, isr []int, behind time.Duration) error {
	var stopped []*procs.Kafka
	resume := func() error {
		var errs []error
		for _, f := range stopped {
			errs = append(errs, f.Resume())
		}
		return errors.Join(errs...)
	}
	for _, r := range isr {
		f := m.cluster.Node(r)
		if r == id || f == nil {
			continue
		}
		if err := f.Pause(); err != nil {
			return errors.Join(err, resume())
		}
		stopped = append(stopped, f)
	}
	select {
	case <-ctx.Done():
		return errors.Join(ctx.Err(), resume())
	case <-time.After(behind):
	}
	err := leader.Kill()
	return errors.Join(err, resume())
}
