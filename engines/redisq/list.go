package redisq

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// listDesign: producers LPUSH (or RPUSH) to one list; consumers pop the other end with BLMPOP,
// up to list.count at a time. Popping is the delivery and there is no acknowledgement: a consumer that dies
// after popping loses the message. That is the design.
type listDesign struct {
	client redis.UniversalClient
	spec   engines.Spec
	ready  string
	// readyArg is ready boxed once, for push.
	readyArg any
}

func newListDesign(client redis.UniversalClient, spec engines.Spec) *listDesign {
	ready := listKey(spec)
	return &listDesign{client: client, spec: spec, ready: ready, readyArg: ready}
}

func (l *listDesign) setup(ctx context.Context) error { return nil }

func (l *listDesign) teardown(ctx context.Context) error {
	if keys := ownKeys(l.spec, l.ready); len(keys) > 0 {
		return l.client.Del(ctx, keys...).Err()
	}
	return nil
}

func (l *listDesign) newConsumer(_ context.Context, id int) (engines.Consumer, error) {
	return &listConsumer{l: l, conn: dedicated{client: l.client}}, nil
}

func (l *listDesign) lag(ctx context.Context) (engines.Lag, error) {
	n, err := l.client.LLen(ctx, l.ready).Result()
	return engines.Lag{Backlog: n}, err
}

// push queues the batch as one variadic LPUSH (or RPUSH): one command, one acknowledgement for
// all of it. Built with Do, so the arguments are one slice (the typed LPush copies them into a
// second one).
func (l *listDesign) push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte) []redis.Cmder {
	args := make([]any, 2, 2+len(payloads))
	args[0], args[1] = "LPUSH", l.readyArg
	if l.spec.List.Push == "rpush" {
		args[0] = "RPUSH"
	}
	for _, pl := range payloads {
		args = append(args, pl)
	}
	cmd := pipe.Do(ctx, args...)
	cmds := make([]redis.Cmder, len(payloads))
	for i := range cmds {
		cmds[i] = cmd
	}
	return cmds
}

// listConsumer pops up to list.count messages in one round trip: BLMPOP timeout 1 key
// RIGHT|LEFT COUNT n (Redis 7.0) waits for the first and takes whatever else is there, up to n,
// so a busy list costs one round trip per batch and an idle one still wakes the consumer at once.
type listConsumer struct {
	l    *listDesign
	conn dedicated
	// buf holds the last reply; the payloads Receive returns are slices of it, valid until the
	// next Receive (the runner is done with a batch by then). One buffer reused saves growing a
	// fresh one for every reply, which was a tenth of qbench's CPU at 200,000 msg/s.
	buf bytes.Buffer
}

// popTimeout is the blocking pop's timeout: short, so the runner can stop the consumer promptly.
func popTimeout(spec engines.Spec) time.Duration {
	if spec.List.Timeout > 0 {
		return spec.List.Timeout
	}
	return 100 * time.Millisecond
}

func (c *listConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	c.buf.Reset()
	err := c.conn.get().DoRawWriteTo(ctx, &c.buf, "BLMPOP", seconds(popTimeout(c.l.spec)), 1, c.l.ready, c.l.popEnd(), "COUNT", popCount(c.l.spec)).Err()
	if err != nil {
		return nil, c.conn.check(err)
	}
	return poppedOf(c.buf.Bytes())
}

// poppedOf reads a raw BLMPOP reply, [key, [element...]] or null on timeout; payloads are slices
// of raw, so a popped message costs no allocation of its own.
func poppedOf(raw []byte) ([]engines.Delivery, error) {
	r := rawReply{b: raw}
	n, null, err := r.array()
	if err != nil || null {
		return nil, err
	}
	if n != 2 {
		return nil, fmt.Errorf("BLMPOP: reply of %d elements", n)
	}
	if err := r.skip(); err != nil { // the key
		return nil, err
	}
	m, _, err := r.array()
	if err != nil {
		return nil, err
	}
	ds := make([]engines.Delivery, m)
	for i := range ds {
		if ds[i].Payload, _, err = r.bulk(); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// popEnd is the end of the ready list consumers take from: the other end from the producers'.
func (l *listDesign) popEnd() string {
	if l.spec.List.Push == "rpush" {
		return "LEFT"
	}
	return "RIGHT"
}

// popCount is how many elements one pop takes at most.
func popCount(spec engines.Spec) int { return max(spec.List.Count, 1) }

// seconds formats a blocking timeout the way Redis 6+ takes it, in fractional seconds. (go-redis's
// typed BRPOP/BLMOVE round anything under a second up to 1 s.)
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func (c *listConsumer) Ack(context.Context, []engines.Delivery) error { return nil }

func (c *listConsumer) Close() error { return c.conn.close() }
