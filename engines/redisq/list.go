package redisq

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// listDesign: producers LPUSH (or RPUSH) to one list; consumers pop the other end with BRPOP
// (or BLPOP). Popping is the delivery and there is no acknowledgement: a consumer that dies
// after popping loses the message. That is the design.
type listDesign struct {
	client *redis.Client
	spec   engines.Spec
	ready  string
}

func newListDesign(client *redis.Client, spec engines.Spec) *listDesign {
	return &listDesign{client: client, spec: spec, ready: keyPrefix(spec) + "ready"}
}

func (l *listDesign) setup(ctx context.Context) error { return nil }

func (l *listDesign) teardown(ctx context.Context) error { return l.client.Del(ctx, l.ready).Err() }

func (l *listDesign) newProducer(int) engines.Producer {
	return &listProducer{client: l.client, key: l.ready, push: l.spec.List.Push}
}

func (l *listDesign) newConsumer(_ context.Context, id int) (engines.Consumer, error) {
	return &listConsumer{l: l}, nil
}

func (l *listDesign) lag(ctx context.Context) (engines.Lag, error) {
	n, err := l.client.LLen(ctx, l.ready).Result()
	return engines.Lag{Backlog: n}, err
}

// listProducer pushes a batch as one variadic LPUSH: one round trip, one acknowledgement for all.
type listProducer struct {
	client *redis.Client
	key    string
	push   string
}

func (p *listProducer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	vals := make([]any, len(payloads))
	for i, pl := range payloads {
		vals[i] = pl
	}
	var err error
	if p.push == "rpush" {
		err = p.client.RPush(ctx, p.key, vals...).Err()
	} else {
		err = p.client.LPush(ctx, p.key, vals...).Err()
	}
	for i := range errs {
		errs[i] = err
	}
}

func (p *listProducer) Close() error { return nil }

type listConsumer struct {
	l *listDesign
}

// popTimeout is the blocking pop's timeout: short, so the runner can stop the consumer promptly.
func popTimeout(spec engines.Spec) time.Duration {
	if spec.List.Timeout > 0 {
		return spec.List.Timeout
	}
	return 100 * time.Millisecond
}

func (c *listConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	cmd := "BRPOP"
	if c.l.spec.List.Push == "rpush" {
		cmd = "BLPOP"
	}
	res, err := c.l.client.Do(ctx, cmd, c.l.ready, seconds(popTimeout(c.l.spec))).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []engines.Delivery{{Payload: []byte(res[1])}}, nil
}

// seconds formats a blocking timeout the way Redis 6+ takes it, in fractional seconds. (go-redis's
// typed BRPOP/BLMOVE round anything under a second up to 1 s.)
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func (c *listConsumer) Ack(context.Context, []engines.Delivery) error { return nil }

func (c *listConsumer) Close() error { return nil }
