package redisq

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// pubsubDesign: producers PUBLISH to one channel; every consumer is a subscriber of its own
// (SUBSCRIBE, or PSUBSCRIBE to a pattern) and receives every message, at most once: a subscriber
// that is not listening misses what is published meanwhile. Each subscriber is its own receiving
// group in the ledger.
type pubsubDesign struct {
	client  redis.UniversalClient
	spec    engines.Spec
	channel string
}

func newPubSubDesign(client redis.UniversalClient, spec engines.Spec) *pubsubDesign {
	return &pubsubDesign{client: client, spec: spec, channel: channelName(spec)}
}

func (p *pubsubDesign) setup(context.Context) error    { return nil }
func (p *pubsubDesign) teardown(context.Context) error { return nil }

func (p *pubsubDesign) groups() int        { return max(p.spec.Consumers, 1) }
func (p *pubsubDesign) groupOf(id int) int { return id }

// lag: nothing is stored, so there is no backlog; the number of subscribers the server counts on
// the channel (PUBSUB NUMSUB, or NUMPAT for patterns) is reported instead.
func (p *pubsubDesign) lag(ctx context.Context) (engines.Lag, error) {
	if p.spec.PubSub.Pattern {
		n, err := p.client.PubSubNumPat(ctx).Result()
		return engines.Lag{Subscribers: n}, err
	}
	m, err := p.client.PubSubNumSub(ctx, p.channel).Result()
	return engines.Lag{Subscribers: m[p.channel]}, err
}

// push queues one PUBLISH per payload; its reply (the subscribers reached) is the acknowledgement.
func (p *pubsubDesign) push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte) []redis.Cmder {
	cmds := make([]redis.Cmder, len(payloads))
	for i, pl := range payloads {
		cmds[i] = pipe.Publish(ctx, p.channel, pl)
	}
	return cmds
}

// pubsubConsumer reads its subscription's socket itself, one message at a time, so that a slow
// consumer is slow on the wire too and the server's output buffer limit applies to it as it would
// to a slow application (go-redis's Channel() would buffer and drop on the client instead).
type pubsubConsumer struct {
	ps *redis.PubSub
}

// newConsumer subscribes and returns once the server has confirmed the subscription, so no
// message published after NewConsumer returns can be missed for want of listening.
func (p *pubsubDesign) newConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	var ps *redis.PubSub
	if p.spec.PubSub.Pattern {
		ps = p.client.PSubscribe(ctx, subscribePattern(p.spec))
	} else {
		ps = p.client.Subscribe(ctx, p.channel)
	}
	if _, err := ps.Receive(ctx); err != nil { // the subscribe confirmation
		ps.Close()
		return nil, err
	}
	return &pubsubConsumer{ps: ps}, nil
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
			return []engines.Delivery{{Payload: []byte(m.Payload)}}, nil
		}
		// Subscription confirmations and pongs are not messages; keep waiting.
	}
}

func (c *pubsubConsumer) Ack(context.Context, []engines.Delivery) error { return nil }

func (c *pubsubConsumer) Close() error { return c.ps.Close() }
