package redisq

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// Design is one of redisq's queue designs on a client the caller owns, for engines that compose
// several (engines/rediscluster runs one per shard, on a go-redis ClusterClient): the designs'
// commands, consumers, lag and sweep without this package's single-server engine around them.
// Every key a design makes is named from KeyPrefix(spec), so with a hash tag in spec.RunID
// (ShardKey) all of one design's keys fall in one cluster slot and no command crosses slots.
type Design struct {
	d design
}

// DesignOptions choose variants a caller needs beyond the scenario.
type DesignOptions struct {
	// ShardedPubSub makes the pubsub design use SPUBLISH/SSUBSCRIBE (Redis 7.0): on a cluster a
	// PUBLISH is broadcast over the whole cluster bus, a sharded one stays in the slot's shard.
	ShardedPubSub bool
}

// NewDesign builds spec.Design on client. Nothing is sent until Setup.
// A Design is one key set: the caller composes shards itself, so spec.Shards is taken as 1.
func NewDesign(client redis.UniversalClient, spec engines.Spec, o DesignOptions) (*Design, error) {
	spec.Shards = 1
	sh := newShards(spec)
	switch spec.Design {
	case "stream":
		return &Design{newStreamDesign(client, spec, sh)}, nil
	case "list":
		return &Design{newListDesign(client, spec, sh)}, nil
	case "reliable-list":
		return &Design{newReliableDesign(client, spec, sh)}, nil
	case "pubsub":
		p := newPubSubDesign(client, spec, sh)
		if !o.ShardedPubSub {
			return &Design{p}, nil
		}
		if optionsOf(spec).PubSub.Pattern {
			return nil, errors.New("redis.pubsub.pattern: sharded pub/sub has no pattern subscriptions (Redis 7.0 has no PSSUBSCRIBE)")
		}
		return &Design{&shardedPubSub{p}}, nil
	}
	return nil, fmt.Errorf("design %q is not implemented", spec.Design)
}

// KeyPrefix is the prefix of every key a run's design creates.
func KeyPrefix(spec engines.Spec) string { return keyPrefix(spec) }

// Setup creates what the design needs before producers start (stream groups, the reaper).
func (d *Design) Setup(ctx context.Context) error { return d.d.setup(ctx) }

// Teardown removes the design's keys.
func (d *Design) Teardown(ctx context.Context) error { return d.d.teardown(ctx) }

// Push queues the commands that send payloads on pipe, one Cmder per payload.
func (d *Design) Push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte) []redis.Cmder {
	return d.d.push(ctx, pipe, payloads, nil, new(pushBuf)) // no connection of its own to keep one
}

// NewConsumer opens consumer id (its group is GroupOf(id)).
func (d *Design) NewConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	return d.d.newConsumer(ctx, id)
}

// Lag is the design's backlog as the server sees it.
func (d *Design) Lag(ctx context.Context) (engines.Lag, error) { return d.d.lag(ctx) }

// Groups is the number of receiving groups, each owed every message.
func (d *Design) Groups() int {
	if g, ok := d.d.(grouped); ok {
		return g.groups()
	}
	return 1
}

// GroupOf is consumer id's receiving group.
func (d *Design) GroupOf(id int) int {
	if g, ok := d.d.(grouped); ok {
		return g.groupOf(id)
	}
	return 0
}

// Sweep reports what the design still holds (engines.Sweeper); engines.ErrNothingStored for
// pub/sub.
func (d *Design) Sweep(ctx context.Context, found func(group int, payload []byte)) error {
	s, ok := d.d.(sweeper)
	if !ok {
		return engines.ErrNothingStored
	}
	return s.sweep(ctx, found)
}

// Stats are the design's counters (dead letters, requeued), nil when it keeps none.
func (d *Design) Stats(ctx context.Context) map[string]int64 {
	if st, ok := d.d.(interface {
		stats(ctx context.Context) map[string]int64
	}); ok {
		return st.stats(ctx)
	}
	return nil
}

// shardedPubSub is the pubsub design with SPUBLISH and SSUBSCRIBE: the same at-most-once fan-out
// to every subscriber, routed to the node owning the channel's slot.
type shardedPubSub struct{ *pubsubDesign }

func (p *shardedPubSub) push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte, _ [][]int, _ *pushBuf) []redis.Cmder {
	cmds := make([]redis.Cmder, len(payloads))
	for i, pl := range payloads {
		cmds[i] = pipe.SPublish(ctx, p.channels[0], pl)
	}
	return cmds
}

func (p *shardedPubSub) newConsumer(ctx context.Context, _ int) (engines.Consumer, error) {
	ps := p.client.SSubscribe(ctx, p.channels[0])
	if _, err := ps.Receive(ctx); err != nil { // the subscribe confirmation
		ps.Close()
		return nil, err
	}
	return &pubsubConsumer{p: p.pubsubDesign, ps: ps}, nil
}

// lag counts the channel's subscribers on the node owning its slot (PUBSUB SHARDNUMSUB).
func (p *shardedPubSub) lag(ctx context.Context) (engines.Lag, error) {
	m, err := p.client.PubSubShardNumSub(ctx, p.channels[0]).Result()
	return engines.Lag{Subscribers: m[p.channels[0]]}, err
}

// DesignNames are the Redis designs, the default first, for engines registering them.
func DesignNames() []string { return append([]string(nil), designs...) }
