// Package sentinelq runs redisq's queue designs on a standalone Redis primary with replicas,
// watched by three Sentinels, all started by qbench on loopback: `redis-sentinel`. Clients find
// the primary by asking the Sentinels each time they connect. Its fault is partition: the
// primary cut off from its replicas and the Sentinels while the clients still reach it; the
// Sentinels promote a replica, the old primary goes on acknowledging writes (unless
// min-replicas-to-write refuses them), and at the heal it becomes the new primary's replica and
// what it acknowledged alone is gone (partition.go, proxy.go).
package sentinelq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
	"qbench/engines/redisq"
)

func init() {
	engines.Register(redisq.WithSection(engines.Registration{
		Name:    "redis-sentinel",
		Designs: redisq.DesignNames(),
		Summary: "a redis-server primary with replicas (replicas:, default 2) watched by three redis-sentinel processes, all started by qbench on loopback; clients find the primary through the Sentinels",
		New:     newEngine,
		Faults:  []string{"partition", "command"},
		// Every node gets the scenario's persistence (any may become primary).
		Sections: []string{"persistence", "policy", "replicas", "shards", "shard_routing", "shard_skew"},
		Requires: func() error {
			if _, err := redisq.RedisServerPath(); err != nil {
				return err
			}
			_, err := SentinelPath()
			return err
		},
	}))
}

// engine is the single-server Redis engine on whichever node the Sentinels name as primary.
type engine struct {
	*redisq.Hosted
	topo *topology
	// mu orders Partition and Heal; cut is set between them, and admin is a connection to the
	// partitioned primary opened by Partition, so that Heal's first command needs no dial.
	mu    sync.Mutex
	cut   bool
	admin *redis.Client
}

func newEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	n := spec.Replicas
	if n == 0 {
		n = DefaultReplicas
	}
	topo, err := startTopology(ctx, spec.Persistence, n)
	if err != nil {
		return nil, err
	}
	// Every connection asks the Sentinels where the primary is, so connections made after a
	// failover reach the promoted replica, while those already open stay where they are (on the
	// old primary during a partition). go-redis's failover client would close those the moment
	// it heard +switch-master from a Sentinel; clients cut off from the Sentinels with the old
	// primary hear nothing, and those are the clients this engine models.
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	opts := &redis.Options{
		Addr: topo.primary.Addr(),
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr, err := topo.masterAddr(ctx)
			if err != nil {
				return nil, err
			}
			return dialer.DialContext(ctx, network, topo.realAddr(addr))
		},
	}
	h, err := redisq.NewHosted(ctx, spec, "redis-sentinel", opts, topo.stop, func() string { return strconv.Itoa(topo.primary.PID()) })
	if err != nil {
		topo.stop()
		return nil, err
	}
	return &engine{Hosted: h, topo: topo}, nil
}

// Facts adds the topology to the single-server engine's facts: the Sentinels' settings and
// where the primary is now.
func (e *engine) Facts(ctx context.Context) engines.Facts {
	f := e.Hosted.Facts(ctx)
	f.Settings["replicas"] = strconv.Itoa(len(e.topo.replicas))
	f.Settings["sentinels"] = strconv.Itoa(len(e.topo.watchers))
	f.Settings["sentinel_quorum"] = strconv.Itoa(quorum)
	f.Settings["sentinel_down_after_ms"] = strconv.Itoa(downAfterMs)
	f.Settings["sentinel_failover_timeout_ms"] = strconv.Itoa(failoverTimeout)
	if a, err := e.topo.masterAddr(ctx); err == nil {
		f.Settings["primary_now"] = e.topo.realAddr(a)
	}
	return f
}

// Close heals a partition left in force (a run stopped mid-fault), then stops everything.
func (e *engine) Close() error {
	e.mu.Lock()
	if e.admin != nil {
		e.admin.Close()
		e.admin = nil
	}
	e.mu.Unlock()
	e.topo.proxy.release()
	return e.Hosted.Close()
}

// Partition cuts the primary qbench started off from its replicas and the Sentinels, both ways,
// while clients still reach it (engines.Partitioner). Only that node has a proxy in front of
// it, so a run partitions it once, while it is still primary.
func (e *engine) Partition(ctx context.Context) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cut {
		return "", errors.New("a partition is already in progress")
	}
	a, err := e.topo.masterAddr(ctx)
	if err != nil {
		return "", err
	}
	if a != e.topo.proxy.addr() {
		return "", fmt.Errorf("partition cuts off the node started as primary (%s), and the Sentinels name %s primary now: one partition per run", e.topo.primary.Addr(), e.topo.realAddr(a))
	}
	admin := redis.NewClient(&redis.Options{Addr: e.topo.primary.Addr(), PoolSize: 1, MaxRetries: -1})
	if err := admin.Ping(ctx).Err(); err != nil {
		admin.Close()
		return "", err
	}
	e.topo.proxy.holdAll()
	e.cut, e.admin = true, admin
	return "primary " + e.topo.primary.Addr(), nil
}

// settleLimit bounds Heal's wait for a failover the Sentinels are still carrying out.
const settleLimit = 15 * time.Second

// Heal ends the partition (engines.Partitioner). The old primary's writes are paused first
// (CLIENT PAUSE WRITE, on the connection Partition opened): the fault's window has ended, and a
// write it acknowledged from here on would be lost outside it. When the Sentinels promoted a
// replica meanwhile, the old primary is then made that replica's replica and its clients'
// connections closed (their paused writes fail), and only then reconnected to the Sentinels:
// those are the Sentinels' and the clients' own next steps, which would otherwise come seconds
// later (a Sentinel sends REPLICAOF to a node that reports the wrong role only once it has
// reported it for 8 s; a client hears +switch-master only from a Sentinel it reaches). Writes
// after the heal go to the promoted replica; what the old primary acknowledged alone is
// discarded by its full resync. Without a failover the pause simply ends. It returns the
// primary then.
func (e *engine) Heal(ctx context.Context) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.cut {
		return "", errors.New("partition: nothing to heal")
	}
	e.cut = false
	c := e.admin
	e.admin = nil
	defer c.Close()
	defer e.topo.proxy.release()
	if err := c.Do(ctx, "CLIENT", "PAUSE", strconv.Itoa(int(settleLimit.Milliseconds())+5000), "WRITE").Err(); err != nil {
		return "", fmt.Errorf("pausing the old primary's writes: %w", err)
	}
	defer c.Do(context.WithoutCancel(ctx), "CLIENT", "UNPAUSE")
	// A failover begun shortly before the heal is let finish: the Sentinels agree on a primary.
	var now string
	deadline := time.Now().Add(settleLimit)
	for {
		a, ok := e.topo.failoverSettled(ctx)
		if ok {
			now = a
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the Sentinels did not settle on a primary within %s", settleLimit)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return "", err
		}
	}
	if now == e.topo.proxy.addr() {
		return e.topo.primary.Addr() + " (no failover)", nil
	}
	// First every client connection (normal, pub/sub) but this one, while their writes are
	// still paused: their next command dials again, and the Sentinels send it to the promoted
	// replica. Only then REPLICAOF, so that no client is answered READONLY by the old primary
	// (README, "Why no client sees READONLY"). CLIENT and REPLICAOF are no writes, so the pause
	// holds neither.
	for _, typ := range []string{"normal", "pubsub"} {
		if err := c.Do(ctx, "CLIENT", "KILL", "TYPE", typ, "SKIPME", "yes").Err(); err != nil {
			return now, fmt.Errorf("closing the old primary's clients: %w", err)
		}
	}
	host, port, _ := net.SplitHostPort(now)
	if err := c.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		return now, fmt.Errorf("making the old primary %s a replica of %s: %w", e.topo.primary.Addr(), now, err)
	}
	return e.topo.realAddr(now), nil
}
