package redisq

import (
	"context"
	"errors"
	"net"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// pubsubDesign: producers PUBLISH to one channel; every consumer is a subscriber of its own
// (SUBSCRIBE, or PSUBSCRIBE to a pattern) and receives every message, at most once: a subscriber
// that is not listening misses what is published meanwhile. Each subscriber is its own receiving
// group in the ledger. With shards there are N channels; each subscriber, being a group of its
// own, subscribes to all of them (the pattern already matches them all).
type pubsubDesign struct {
	client   redis.UniversalClient
	spec     engines.Spec
	pattern  bool // PSUBSCRIBE
	shards   *shards
	channels []string // one per shard
	// channelArgs are channels boxed once, for push.
	channelArgs []any
	// shardOfChannel maps a channel back to its shard.
	shardOfChannel map[string]int
}

func newPubSubDesign(client redis.UniversalClient, spec engines.Spec, sh *shards) *pubsubDesign {
	p := &pubsubDesign{client: client, spec: spec, pattern: optionsOf(spec).PubSub.Pattern, shards: sh, channels: sh.keys(channelName(spec)), shardOfChannel: map[string]int{}}
	for k, ch := range p.channels {
		p.shardOfChannel[ch] = k
		p.channelArgs = append(p.channelArgs, ch)
	}
	return p
}

func (p *pubsubDesign) setup(context.Context) error    { return nil }
func (p *pubsubDesign) teardown(context.Context) error { return nil }

func (p *pubsubDesign) groups() int        { return max(p.spec.Consumers, 1) }
func (p *pubsubDesign) groupOf(id int) int { return id }

// lag: nothing is stored, so there is no backlog; the number of subscribers the server counts on
// the channel (PUBSUB NUMSUB, or NUMPAT for patterns) is reported instead: with shards, the
// fewest any channel has (a channel short of a subscriber is where messages go missing), and
// each channel's count per shard.
func (p *pubsubDesign) lag(ctx context.Context) (engines.Lag, error) {
	if p.pattern {
		n, err := p.client.PubSubNumPat(ctx).Result()
		lag := engines.Lag{Subscribers: n}
		p.shards.perShard(&lag, make([]int64, p.shards.n), make([]int64, p.shards.n))
		return lag, err
	}
	m, err := p.client.PubSubNumSub(ctx, p.channels...).Result()
	if err != nil {
		return engines.Lag{}, err
	}
	lag := engines.Lag{Subscribers: m[p.channels[0]]}
	for _, ch := range p.channels {
		lag.Subscribers = min(lag.Subscribers, m[ch])
	}
	p.shards.perShard(&lag, make([]int64, p.shards.n), make([]int64, p.shards.n))
	for k := range lag.Shards {
		lag.Shards[k].Subscribers = m[p.channels[k]]
	}
	return lag, nil
}

// push queues one PUBLISH per payload, to its shard's channel; its reply (the subscribers
// reached) is the acknowledgement. The arguments are built in buf (see pushBuf), so a message
// costs its command object alone.
func (p *pubsubDesign) push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte, byShard [][]int, buf *pushBuf) []redis.Cmder {
	cmds := buf.start(len(payloads), 3*len(payloads))
	if byShard == nil {
		for i, pl := range payloads {
			lo := len(buf.args)
			buf.args = append(buf.args, "PUBLISH", p.channelArgs[0], buf.payload(pl))
			cmds[i] = redis.NewIntCmd(ctx, buf.since(lo)...)
		}
		_ = pipe.BatchProcess(ctx, cmds...)
		return cmds
	}
	for k, ix := range byShard {
		for _, i := range ix {
			lo := len(buf.args)
			buf.args = append(buf.args, "PUBLISH", p.channelArgs[k], buf.payload(payloads[i]))
			cmds[i] = redis.NewIntCmd(ctx, buf.since(lo)...)
		}
	}
	// Queued at once: the pipeline's command slice is allocated once, not grown per PUBLISH.
	_ = pipe.BatchProcess(ctx, cmds...)
	return cmds
}

// pubsubConsumer reads its subscription's socket itself, one message at a time, so that a slow
// consumer is slow on the wire too and the server's output buffer limit applies to it as it would
// to a slow application (go-redis's Channel() would buffer and drop on the client instead).
type pubsubConsumer struct {
	p  *pubsubDesign
	ps *redis.PubSub
	// ds is the one delivery Receive returns, reused (valid until the next Receive).
	ds [1]engines.Delivery
}

// newConsumer subscribes and returns once the server has confirmed the subscription, so no
// message published after NewConsumer returns can be missed for want of listening.
func (p *pubsubDesign) newConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	var ps *redis.PubSub
	if p.pattern {
		ps = p.client.PSubscribe(ctx, subscribePattern(p.spec))
	} else {
		ps = p.client.Subscribe(ctx, p.channels...)
	}
	// One confirmation per channel (SUBSCRIBE answers each channel it names).
	confirms := len(p.channels)
	if p.pattern {
		confirms = 1
	}
	for i := 0; i < confirms; i++ {
		if _, err := ps.Receive(ctx); err != nil {
			ps.Close()
			return nil, err
		}
	}
	return &pubsubConsumer{p: p, ps: ps}, nil
}

// Receive waits up to 100 ms for one message. (One at a time: a read deadline shorter than a
// frame could cut a frame in half.)
func (c *pubsubConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	for {
		msg, err := c.ps.ReceiveTimeout(ctx, 100*time.Millisecond)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, nil
			}
			return nil, err
		}
		if m, ok := msg.(*redis.Message); ok {
			c.p.shards.received[c.p.shardOf(m.Channel)].Add(1)
			// The payload is the message's string, not a copy: the runner only reads it, and
			// before the next Receive.
			c.ds[0] = engines.Delivery{Payload: unsafe.Slice(unsafe.StringData(m.Payload), len(m.Payload))}
			return c.ds[:], nil
		}
		// Subscription confirmations and pongs are not messages; keep waiting.
	}
}

func (c *pubsubConsumer) Ack(context.Context, []engines.Delivery) error { return nil }

func (c *pubsubConsumer) Close() error { return c.ps.Close() }

// shardOf is the shard of a channel (0 when unknown).
func (p *pubsubDesign) shardOf(channel string) int { return p.shardOfChannel[channel] }
