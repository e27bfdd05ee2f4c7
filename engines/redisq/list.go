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

func (l *listDesign) newConsumer(_ context.Context, id int) (engines.Consumer, error) {
	return &listConsumer{l: l}, nil
}

func (l *listDesign) lag(ctx context.Context) (engines.Lag, error) {
	n, err := l.client.LLen(ctx, l.ready).Result()
	return engines.Lag{Backlog: n}, err
}

// push queues the batch as one variadic LPUSH (or RPUSH): one command, one acknowledgement for
// all of it.
func (l *listDesign) push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte) []redis.Cmder {
	vals := make([]any, len(payloads))
	for i, pl := range payloads {
		vals[i] = pl
	}
	var cmd redis.Cmder
	if l.spec.List.Push == "rpush" {
		cmd = pipe.RPush(ctx, l.ready, vals...)
	} else {
		cmd = pipe.LPush(ctx, l.ready, vals...)
	}
	cmds := make([]redis.Cmder, len(payloads))
	for i := range cmds {
		cmds[i] = cmd
	}
	return cmds
}

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
