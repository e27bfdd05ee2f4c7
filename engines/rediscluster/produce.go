package rediscluster

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

func (e *engine) NewProducer(_ context.Context, id int) (engines.Producer, error) {
	return &producer{e: e, id: id}, nil
}

// producer sends each batch to one shard, as one pipeline on a connection to the primary that
// owns the shard's slot (from the ClusterClient's slot map), followed, when the scenario asks, by
// WAIT or WAITAOF on that same connection: WAIT counts the replicas that have this connection's
// writes, so it must follow them on the node that took them. (Through the ClusterClient's own
// pipeline a keyless WAIT would go to any node.) After an error that says the slot map is stale
// (a refused connection to a killed primary, MOVED, CLUSTERDOWN) the client reloads the map, and
// the next batches go to the promoted replica: this is how producers follow MOVED. A failed
// batch is not retried (the runner counts it failed; a retry after a lost reply would be a
// duplicate the ledger should see, not hide).
type producer struct {
	e    *engine
	id   int
	next atomic.Uint64
}

// shardFor is the shard of the producer's next batch: round-robin over batches, or the
// producer's own shard (shard_routing: producer).
func (p *producer) shardFor() int {
	n := len(p.e.shards)
	if p.e.spec.ShardRouting == "producer" {
		return p.id % n
	}
	return int((p.next.Add(1) - 1 + uint64(p.id)) % uint64(n))
}

func (p *producer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	s := p.e.shards[p.shardFor()]
	node, err := p.e.client.MasterForKey(ctx, s.key)
	if err != nil {
		p.e.client.ReloadState(ctx)
		for i := range errs {
			errs[i] = err
		}
		return
	}
	var cmds []redis.Cmder
	var wait *redis.Cmd
	w := p.e.wait
	_, _ = node.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		cmds = s.d.Push(ctx, pipe, payloads)
		wait = p.e.waits.Queue(ctx, pipe, w)
		return nil
	})
	stale := false
	for i, c := range cmds {
		errs[i] = c.Err()
		stale = stale || staleMap(errs[i])
	}
	p.e.waits.Note(wait, w, errs)
	if stale {
		p.e.client.ReloadState(ctx)
	}
}

func (p *producer) Close() error { return nil }

// staleMap says whether err means the slot map may be out of date: anything but the server's own
// reply (the node is unreachable, its pool refuses to dial it again for a while, a connection
// broke), or a reply saying the slot is elsewhere or the cluster is not serving it.
func staleMap(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		return true
	}
	s := err.Error()
	for _, p := range []string{"MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN", "READONLY"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
