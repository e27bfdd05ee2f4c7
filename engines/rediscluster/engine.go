// Package rediscluster runs redisq's queue designs on a Redis Cluster through go-redis's
// ClusterClient: `redis-cluster`, a cluster of redis-server processes qbench starts on loopback
// (3 primaries with a replica each by default), and `redis-cluster-url`, an existing cluster
// given by seed nodes. The queue is spread over shards, each a complete design (stream and its
// groups, ready and processing lists, channel) under a key prefix with a hash tag
// (redisq.ShardKey), so all of one shard's keys live in one slot and the shards land on
// different primaries. Faults: primary-kill (SIGKILL the primary owning a shard's slot; its
// replica is promoted after cluster-node-timeout) and node-restart (kill and restart that node
// on its data directory, where it rejoins the cluster), and partition (that primary cut off
// from the other nodes while clients still reach it: partition.go, links.go).
package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
	"qbench/engines/redisq"
)

func init() {
	engines.Register(redisq.WithSection(engines.Registration{
		Name:    "redis-cluster",
		Designs: redisq.DesignNames(),
		Summary: "a Redis Cluster of redis-server processes started by qbench on loopback (3 primaries, replicas: per primary, default 1), the queue sharded over the primaries",
		New:     newManaged,
		Faults:  []string{"stall", "primary-kill", "node-restart", "partition"},
		// Every node gets the scenario's persistence; replicas are per primary.
		Sections: []string{"persistence", "policy", "replicas", "shards", "shard_routing"},
		Requires: func() error { _, err := redisq.RedisServerPath(); return err },
	}))
	engines.Register(redisq.WithSection(engines.Registration{
		Name:    "redis-cluster-url",
		Designs: redisq.DesignNames(),
		Summary: "an existing Redis Cluster given by seed nodes (address: host:port,host:port,...); keys under a run-specific prefix",
		New:     newURL,
		// Through the cluster's own commands (urlfaults.go): checked before the run.
		Faults: []string{"stall", "primary-kill"},
		// The cluster is someone else's: its persistence is set there, not by the scenario.
		Sections:     []string{"shards", "shard_routing"},
		NeedsAddress: true,
		Shared:       true,
	}))
}

// DefaultPrimaries is the managed cluster's size in primaries.
const DefaultPrimaries = 3

// engine is one design sharded over a cluster.
type engine struct {
	spec    engines.Spec
	wait    redisq.WaitOptions // the scenario's redis.wait
	target  string
	client  *redis.ClusterClient
	shards  []shard
	cluster *Cluster // nil for an existing cluster
	// faultShard is the shard the next fault hits (TargetShard).
	faultShard atomic.Int64
	// behind is how long the next primary-kill holds the victim's replicas behind first
	// (HoldReplicas), in nanoseconds.
	behind atomic.Int64
	// crashed is the node node-restart killed, until Restart.
	crashed atomic.Pointer[crashedNode]
	// partition is the partition in progress, until Heal (partition.go).
	partition atomic.Pointer[partitioned]
	// WAIT outcomes: batches waited for, those that fell short, errors.
	waits redisq.WaitTally
	// seeds are the addresses the client was given, where faults on an existing cluster start
	// looking for its nodes (urlfaults.go); dial maps an announced address to the one dialed.
	seeds []string
	dial  func(string) string
	// killBy is the command primary-kill sends on an existing cluster, as the checks before the
	// run found it allowed (urlfaults.go).
	killBy []string
	// nodeTimeout is an existing cluster's cluster-node-timeout, when it could be read (0: not).
	nodeTimeout time.Duration
	// lastFailover names what the last primary-kill hit and what replaced it.
	lastFailover atomic.Pointer[string]
}

type crashedNode struct {
	addr string
}

// shard is one complete design under a prefix whose hash tag puts all its keys in slot.
type shard struct {
	d *redisq.Design
	// key is a key of the shard (any of them: they share the slot), for routing.
	key  string
	slot int
}

func newManaged(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	if spec.LossyFS {
		return nil, errors.New("redis-cluster: power-loss and disk-full faults are not supported on a cluster")
	}
	replicas := spec.Replicas
	if replicas == 0 {
		replicas = 1
	}
	// The link proxies only when the run will cut a node off.
	c, err := StartCluster(ctx, DefaultPrimaries, replicas, spec.Persistence, slices.Contains(spec.Faults, "partition") || slices.Contains(spec.Faults, engines.HoldsReplicas))
	if err != nil {
		return nil, err
	}
	e, err := newEngine(ctx, spec, "redis-cluster", c.Addrs(), c.DialAddr)
	if err != nil {
		c.Stop()
		return nil, err
	}
	e.cluster = c
	return e, nil
}

func newURL(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	var seeds []string
	for _, a := range strings.Split(spec.Address, ",") {
		if a = strings.TrimSpace(a); a != "" {
			seeds = append(seeds, a)
		}
	}
	if len(seeds) == 0 {
		return nil, errors.New("redis-cluster-url: address must list seed nodes, host:port[,host:port...]")
	}
	e, err := newEngine(ctx, spec, "redis-cluster-url", seeds, nil)
	if err != nil {
		return nil, err
	}
	// The faults' checks, before the run: a target that cannot carry one out refuses it now.
	if err := e.prepareURLFaults(ctx); err != nil {
		e.client.Close()
		return nil, fmt.Errorf("redis-cluster-url at %s: %w", strings.Join(seeds, ","), err)
	}
	return e, nil
}

// newEngine connects to the cluster at seeds. dial, when not nil, maps the address a node
// announces to the one the client dials (the managed cluster's nodes announce the proxies their
// peers use; clients go to the nodes themselves).
func newEngine(ctx context.Context, spec engines.Spec, target string, seeds []string, dial func(string) string) (*engine, error) {
	o, err := redisq.OptionsOf(spec)
	if err != nil {
		return nil, err
	}
	// As redisq sizes a single server's pool, per node: each in-flight batch holds a connection
	// of the node it writes to for its pipeline, and consumers block on connections of the node
	// owning their shard.
	pool := spec.Producers*max(spec.InFlight, 1) + spec.Consumers*max(spec.Shards, DefaultPrimaries) + 4
	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:        seeds,
		PoolSize:     pool,
		MinIdleConns: min(pool, 16),
		// A dead primary must show up as an error at once, not as a long hang, so the failover
		// window is what the cluster costs; then the client reloads the slot map.
		DialTimeout:           500 * time.Millisecond,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          10 * time.Second,
		Protocol:              2,
		ContextTimeoutEnabled: true,
		Dialer:                dialer(dial),
	})
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("connecting to the cluster at %s: %w", strings.Join(seeds, ","), err)
	}
	n := spec.Shards
	if n <= 0 {
		// ForEachMaster calls fn on every primary concurrently.
		var primaries atomic.Int64
		err := client.ForEachMaster(ctx, func(context.Context, *redis.Client) error { primaries.Add(1); return nil })
		if err != nil || primaries.Load() == 0 {
			client.Close()
			return nil, fmt.Errorf("counting the cluster's primaries: %v", err)
		}
		n = int(primaries.Load())
	}
	switch spec.ShardRouting {
	case "", "round-robin", "producer":
	default:
		client.Close()
		return nil, fmt.Errorf("shard_routing %q is not supported on redis-cluster (round-robin or producer)", spec.ShardRouting)
	}
	if dial == nil {
		dial = func(a string) string { return a }
	}
	e := &engine{spec: spec, wait: o.Wait, target: target, client: client, seeds: seeds, dial: dial}
	for i := range n {
		ss := spec
		ss.RunID = shardRunID(spec.RunID, i, n)
		ss.Shards = 1
		d, err := redisq.NewDesign(client, ss, redisq.DesignOptions{ShardedPubSub: true})
		if err != nil {
			client.Close()
			return nil, err
		}
		key := redisq.KeyPrefix(ss)
		e.shards = append(e.shards, shard{d: d, key: key, slot: redisq.Slot(key)})
	}
	return e, nil
}

// dialer is go-redis's default dial to the address dial maps to; nil without a mapping.
func dialer(dial func(string) string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		return nil
	}
	d := &net.Dialer{Timeout: 500 * time.Millisecond, KeepAlive: 5 * time.Minute}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, dial(addr))
	}
}

// shardRunID names shard i of n: the run's ID with a hash tag (redisq.ShardKey), which every
// key of the shard carries in its prefix. One shard still gets a tag: without it a reliable
// list's ready and processing lists would hash to different slots and LMOVE between them would
// be refused.
func shardRunID(run string, i, n int) string {
	if n == 1 {
		return run + ":{s0}"
	}
	return redisq.ShardKey(run, i, n)
}

func (e *engine) Setup(ctx context.Context) error {
	for _, s := range e.shards {
		if err := e.setupShard(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Teardown removes each shard's keys, then anything else under the run's prefix on every
// primary (delivery counters, heartbeats), one key at a time: a multi-key DEL would cross slots.
func (e *engine) Teardown(ctx context.Context) error {
	var err error
	for _, s := range e.shards {
		err = errors.Join(err, s.d.Teardown(ctx))
	}
	pattern := "qbench:" + e.spec.RunID + ":*"
	err = errors.Join(err, e.client.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if derr := node.Del(ctx, iter.Val()).Err(); derr != nil {
				return derr
			}
		}
		return iter.Err()
	}))
	return err
}

func (e *engine) Close() error {
	e.healAll()
	err := e.client.Close()
	if e.cluster != nil {
		err = errors.Join(err, e.cluster.Stop())
	}
	return err
}

// Groups and GroupOf are the design's: every shard has the same groups.
func (e *engine) Groups() int              { return e.shards[0].d.Groups() }
func (e *engine) GroupOf(consumer int) int { return e.shards[0].d.GroupOf(consumer) }

func (e *engine) NewConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	var subs []engines.Consumer
	for _, i := range e.shardsOf(id) {
		c, err := e.shards[i].d.NewConsumer(ctx, id)
		if err != nil {
			for _, s := range subs {
				s.Close()
			}
			return nil, err
		}
		subs = append(subs, onShard{c, i})
	}
	return newFanIn(subs), nil
}

// DeliveryShards: each delivery names the shard it was read from (engines.DeliverySharder). A
// producer picks a shard per batch (shardFor), not by a function of each message's sequence
// number, so the shard a message was read from is the ledger's only sure word on which messages
// shared a key and owe each other order.
func (e *engine) DeliveryShards() string { return "shard" }

// SoleReaders says whether every shard is read by one consumer of each receiving group
// (engines.SoleReader): shardsOf deals each shard to one member when the group has no more
// members than there are shards.
func (e *engine) SoleReaders() bool {
	members := map[int]int{}
	for c := range e.spec.Consumers {
		members[e.GroupOf(c)]++
	}
	for _, m := range members {
		if m > len(e.shards) {
			return false
		}
	}
	return true
}

// shardsOf deals the shards to the consumers of each receiving group, so that every shard has a
// reader in every group: the group's j-th of m consumers reads shards j, j+m, j+2m, ... when
// there are more shards than consumers, and shard j mod n otherwise. A pub/sub subscriber is a
// group of its own, so it subscribes to every shard's channel.
func (e *engine) shardsOf(id int) []int {
	n := len(e.shards)
	g := e.GroupOf(id)
	var members []int // the group's consumers, in order
	for c := range max(e.spec.Consumers, id+1) {
		if e.GroupOf(c) == g {
			members = append(members, c)
		}
	}
	j := 0
	for k, c := range members {
		if c == id {
			j = k
		}
	}
	m := len(members)
	if m >= n {
		return []int{j % n}
	}
	var out []int
	for s := j; s < n; s += m {
		out = append(out, s)
	}
	return out
}

// Lag sums the shards' backlogs and pending counts; for pub/sub it is the fewest subscribers any
// shard's channel has (every subscriber should be on all of them).
func (e *engine) Lag(ctx context.Context) (engines.Lag, error) {
	var total engines.Lag
	for i, s := range e.shards {
		l, err := s.d.Lag(ctx)
		if err != nil {
			return engines.Lag{}, err
		}
		total.Backlog += l.Backlog
		total.Pending += l.Pending
		total.OldestPendingNs = max(total.OldestPendingNs, l.OldestPendingNs)
		if i == 0 || l.Subscribers < total.Subscribers {
			total.Subscribers = l.Subscribers
		}
	}
	return total, nil
}

// Sweep reads what every shard still holds, on whichever primary owns it now.
func (e *engine) Sweep(ctx context.Context, found func(group int, payload []byte)) error {
	for _, s := range e.shards {
		if err := s.d.Sweep(ctx, found); err != nil {
			return err
		}
	}
	return nil
}

// Facts: the version and settings one primary reports, the cluster's shape, and the shards'
// slots with the primary serving each at the end.
func (e *engine) Facts(ctx context.Context) engines.Facts {
	f := engines.Facts{Name: e.target, Design: e.spec.Design, Settings: map[string]string{}, Stats: map[string]int64{}}
	if node, err := e.client.MasterForKey(ctx, e.shards[0].key); err == nil {
		f.Address = node.Options().Addr
		if info, err := node.Info(ctx, "server").Result(); err == nil {
			f.Version = redisq.InfoField(info, "redis_version")
		}
		redisq.FactSettings(ctx, node, f.Settings, "min-replicas-to-write", "cluster-node-timeout")
	}
	f.Settings["shards"] = strconv.Itoa(len(e.shards))
	var where []string
	for _, s := range e.shards {
		addr := "?"
		if node, err := e.client.MasterForKey(ctx, s.key); err == nil {
			addr = node.Options().Addr
		}
		where = append(where, strconv.Itoa(s.slot)+"@"+addr)
		for k, v := range s.d.Stats(ctx) {
			f.Stats[k] += v
		}
	}
	f.Settings["shard_slots"] = strings.Join(where, ",")
	if e.cluster != nil {
		f.Settings["nodes"] = strconv.Itoa(len(e.cluster.Nodes))
		f.Settings["primaries"] = strconv.Itoa(e.cluster.Primaries)
	}
	e.waits.AddStats(f.Stats)
	return f
}
