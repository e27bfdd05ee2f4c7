package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"qbench/engines"
)

// Faults on the managed cluster. Both hit the primary that owns the target shard's slot (the
// fault's shard:, default 0) at the moment the fault fires.

// promoteLimit bounds the wait for a failover: cluster-node-timeout (1 s) until the primary is
// marked failed, then the replica's election (a few hundred ms), with room for a busy machine.
const promoteLimit = 20 * time.Second

// TargetShard sets the shard the next fault hits (the runner calls it before each fault).
func (e *engine) TargetShard(i int) { e.faultShard.Store(int64(i)) }

// targetSlot is the target shard's slot; shard 0 when the index is out of range.
func (e *engine) targetSlot() int {
	i := int(e.faultShard.Load())
	if i < 0 || i >= len(e.shards) {
		i = 0
	}
	return e.shards[i].slot
}

// HoldReplicas sets how long the next primary-kill holds the victim's replicas behind
// (engines.ReplicaHolder; the runner calls it before each fault).
func (e *engine) HoldReplicas(d time.Duration) { e.behind.Store(int64(d)) }

// Failover is primary-kill (engines.FailoverTarget): SIGKILL the primary owning the target shard's slot,
// wait until every remaining node sees its replica promoted and the cluster is healthy, and
// reload the client's slot map. Writes the primary acknowledged and had not yet sent to its
// replica are lost; with WAIT, none it acknowledged.
//
// With replicas held behind (HoldReplicas), the victim's replication links stop forwarding, both
// ways, for that long first: it goes on acknowledging writes (with no WAIT, and while
// min-replicas-max-lag has not run out) that reach no replica, and its replicas' acknowledgements
// stop, so WAIT falls short. Then it is killed and the held links closed: what they held dies
// with it, as bytes in flight on a network do. On loopback, without the hold, a replica is
// never more than a few writes behind and the kill rarely costs anything. A SIGSTOPped replica
// would not do: the stream would wait in its socket buffer and be read when it resumed.
func (e *engine) Failover(ctx context.Context) error {
	if e.cluster == nil {
		if time.Duration(e.behind.Load()) > 0 {
			return errors.New("replicas_behind needs the managed redis-cluster's links")
		}
		return e.urlFailover(ctx) // an existing cluster's, through its API (urlfaults.go)
	}
	slot := e.targetSlot()
	victim, err := e.cluster.PrimaryFor(ctx, slot)
	if err != nil {
		return err
	}
	addr := victim.Addr()
	behind := time.Duration(e.behind.Load())
	if behind > 0 {
		if e.cluster.Links == nil {
			return errors.New("replicas_behind needs the managed redis-cluster's links")
		}
		i := e.cluster.index(victim)
		e.cluster.Links.Hold(i)
		select {
		case <-ctx.Done():
			e.cluster.Links.Release(i)
			return ctx.Err()
		case <-time.After(behind):
		}
		err := victim.Kill()
		e.cluster.Links.Drop(i)
		if err != nil {
			return err
		}
	} else if err := victim.Kill(); err != nil {
		return err
	}
	err = e.cluster.WaitPromoted(ctx, slot, addr, promoteLimit)
	e.reload(ctx)
	what := "primary " + addr
	if now, perr := e.cluster.PrimaryFor(ctx, slot); err == nil && perr == nil {
		what += ", primary now " + now.Addr()
	}
	e.lastFailover.Store(&what)
	return err
}

// Crash is node-restart's first half (engines.Crasher): SIGKILL the primary owning shard 0's
// slot, keeping its data directory. Only a process crash: the cluster has no power-loss file
// system.
func (e *engine) Crash(ctx context.Context, kind engines.CrashKind) error {
	if e.cluster == nil {
		return errors.New("node-restart needs the managed redis-cluster")
	}
	if kind != engines.ProcessCrash {
		return fmt.Errorf("redis-cluster cannot %s", kind)
	}
	victim, err := e.cluster.PrimaryFor(ctx, e.targetSlot())
	if err != nil {
		return err
	}
	if err := victim.Kill(); err != nil {
		return err
	}
	e.crashed.Store(&crashedNode{addr: victim.Addr()})
	return nil
}

// Restart starts the killed node again on its port and directory. Its nodes.conf makes it rejoin
// the cluster: as primary again if it came back before cluster-node-timeout, as the promoted
// replica's replica otherwise (reloading what it had persisted, then a full resync). It returns
// once every node reports cluster_state:ok again (the resync of the rejoined replica may still be
// under way: it costs no writes).
func (e *engine) Restart(ctx context.Context) error {
	c := e.crashed.Swap(nil)
	if c == nil {
		return errors.New("node-restart: no node was killed")
	}
	n := e.cluster.Node(c.addr)
	if err := n.Restart(ctx); err != nil {
		return err
	}
	if e.cluster.Links != nil { // its new process owns its links from now on
		e.cluster.Links.setPID(e.cluster.index(n), n.PID())
	}
	err := e.cluster.WaitHealthy(ctx, promoteLimit, false)
	e.reload(ctx)
	return err
}

// reload makes the client read the slot map again (lazily, on its next command).
func (e *engine) reload(ctx context.Context) {
	if e.client != nil {
		e.client.ReloadState(ctx)
	}
}
