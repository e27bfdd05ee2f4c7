package rediscluster

import (
	"context"
	"errors"
)

// The partition fault: the primary owning the target shard's slot is cut off from every other
// node (its replicas' replication links to it and the cluster bus both ways go through Links),
// while clients still reach it. It keeps acknowledging writes until it notices that it cannot
// reach a majority of primaries (after cluster-node-timeout it sets cluster_state:fail and
// answers CLUSTERDOWN); meanwhile the majority marks it failed and promotes its replica. When
// the partition heals, it learns of the higher configuration epoch and turns into a replica of
// the promoted node, discarding what it had acknowledged alone.

// partitioned is the node cut off by the partition in progress.
type partitioned struct {
	node int
	addr string
	slot int
}

// Partition cuts the target shard's primary off from the rest of the cluster and returns what
// it hit. Heal ends it.
func (e *engine) Partition(ctx context.Context) (string, error) {
	if e.cluster == nil || e.cluster.Links == nil {
		return "", errors.New("partition needs the managed redis-cluster")
	}
	slot := e.targetSlot()
	victim, err := e.cluster.PrimaryFor(ctx, slot)
	if err != nil {
		return "", err
	}
	i := e.cluster.index(victim)
	if !e.partition.CompareAndSwap(nil, &partitioned{node: i, addr: victim.Addr(), slot: slot}) {
		return "", errors.New("a partition is already in progress")
	}
	e.cluster.Links.Cut(i)
	return "primary " + victim.Addr(), nil
}

// Heal ends the partition at once, then waits until every node agrees on a primary for the slot
// and reports cluster_state:ok: the old primary has rejoined (as the promoted replica's replica
// when a failover happened meanwhile). It returns the primary serving the slot then.
func (e *engine) Heal(ctx context.Context) (string, error) {
	p := e.partition.Swap(nil)
	if p == nil {
		return "", errors.New("partition: nothing to heal")
	}
	e.cluster.Links.Heal(p.node)
	err := e.cluster.WaitHealthy(ctx, promoteLimit, false)
	e.reload(ctx)
	now, perr := e.cluster.PrimaryFor(ctx, p.slot)
	if perr != nil {
		return "", errors.Join(err, perr)
	}
	return now.Addr(), err
}

// healAll ends any partition in progress without waiting (Close calls it, so that a run stopped
// mid-fault leaves no node cut off for the next user of the cluster).
func (e *engine) healAll() {
	if p := e.partition.Swap(nil); p != nil && e.cluster != nil && e.cluster.Links != nil {
		e.cluster.Links.Heal(p.node)
	}
}
