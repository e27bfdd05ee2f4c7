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
// up to redis.list.count at a time. Popping is the delivery and there is no acknowledgement: a consumer that dies
// after popping loses the message. That is the design. With shards there are N ready lists; a
// consumer pops from its share of them with one BLMPOP.
type listDesign struct {
	client redis.UniversalClient
	spec   engines.Spec
	opts   ListOptions
	shards *shards
	readys []string // the ready list of each shard
	// readyArgs are readys boxed once, for push.
	readyArgs []any
}

func newListDesign(client redis.UniversalClient, spec engines.Spec, sh *shards) *listDesign {
	l := &listDesign{client: client, spec: spec, opts: optionsOf(spec).List, shards: sh, readys: sh.keys(listKey(spec))}
	for _, k := range l.readys {
		l.readyArgs = append(l.readyArgs, k)
	}
	return l
}

func (l *listDesign) setup(ctx context.Context) error { return nil }

func (l *listDesign) teardown(ctx context.Context) error {
	if keys := ownKeys(l.spec, l.readys...); len(keys) > 0 {
		return l.client.Del(ctx, keys...).Err()
	}
	return nil
}

func (l *listDesign) newConsumer(_ context.Context, id int) (engines.Consumer, error) {
	m, members := member(id, l.spec.Consumers, 1)
	c := &listConsumer{l: l, share: l.shards.share(m, members), conn: dedicated{client: l.client}}
	c.head = []any{"BLMPOP", seconds(popTimeout(l.opts)), len(c.share)}
	c.tail = []any{l.popEnd(), "COUNT", popCount(l.opts)}
	return c, nil
}

// lag is the ready lists' lengths (one pipeline).
func (l *listDesign) lag(ctx context.Context) (engines.Lag, error) {
	pipe := l.client.Pipeline()
	lens := make([]*redis.IntCmd, len(l.readys))
	for k, key := range l.readys {
		lens[k] = pipe.LLen(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return engines.Lag{}, err
	}
	var lag engines.Lag
	backlog := make([]int64, len(lens))
	for k, c := range lens {
		backlog[k] = c.Val()
		lag.Backlog += backlog[k]
	}
	l.shards.perShard(&lag, backlog, make([]int64, len(lens)))
	return lag, nil
}

// push queues the batch as one variadic LPUSH (or RPUSH) per shard: one command, one
// acknowledgement for all of a shard's part. The arguments are built in buf (see pushBuf) and
// the command is an IntCmd, whose integer reply is read without boxing.
func (l *listDesign) push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte, byShard [][]int, buf *pushBuf) []redis.Cmder {
	verb := "LPUSH"
	if l.opts.Push == "rpush" {
		verb = "RPUSH"
	}
	shards := 1
	if byShard != nil {
		shards = len(byShard)
	}
	cmds := buf.start(len(payloads), 2*shards+len(payloads))
	if byShard == nil {
		lo := len(buf.args)
		buf.args = append(buf.args, verb, l.readyArgs[0])
		for _, pl := range payloads {
			buf.args = append(buf.args, buf.payload(pl))
		}
		cmd := redis.NewIntCmd(ctx, buf.since(lo)...)
		_ = pipe.Process(ctx, cmd)
		for i := range cmds {
			cmds[i] = cmd
		}
		return cmds
	}
	for k, ix := range byShard {
		if len(ix) == 0 {
			continue
		}
		lo := len(buf.args)
		buf.args = append(buf.args, verb, l.readyArgs[k])
		for _, i := range ix {
			buf.args = append(buf.args, buf.payload(payloads[i]))
		}
		cmd := redis.NewIntCmd(ctx, buf.since(lo)...)
		_ = pipe.Process(ctx, cmd)
		for _, i := range ix {
			cmds[i] = cmd
		}
	}
	return cmds
}

// listConsumer pops up to redis.list.count messages in one round trip: BLMPOP timeout 1 key
// RIGHT|LEFT COUNT n (Redis 7.0) waits for the first and takes whatever else is there, up to n,
// so a busy list costs one round trip per batch and an idle one still wakes the consumer at once.
type listConsumer struct {
	l *listDesign
	// share is the shards this consumer pops from; turn rotates which is named first (see
	// Receive).
	share []int
	turn  int
	conn  dedicated
	// buf holds the last reply; the payloads Receive returns are slices of it, valid until the
	// next Receive (the runner is done with a batch by then). One buffer reused saves growing a
	// fresh one for every reply, which was a tenth of qbench's CPU at 200,000 msg/s.
	buf bytes.Buffer
	// head and tail are BLMPOP's arguments before and after the keys, boxed once; args is the
	// argument list and ds the deliveries, both reused from Receive to Receive (the deliveries
	// are valid until the next Receive, as their payloads are).
	head, tail []any
	args       []any
	ds         []engines.Delivery
}

// popTimeout is the blocking pop's timeout: short, so the runner can stop the consumer promptly.
func popTimeout(o ListOptions) time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 100 * time.Millisecond
}

// Receive pops from the first non-empty list of the consumer's share. BLMPOP takes the first
// non-empty key it is given, so the order rotates each call: a busy shard named first every time
// would starve the others.
func (c *listConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	c.buf.Reset()
	args := append(c.args[:0], c.head...)
	for i := range c.share {
		args = append(args, c.l.readyArgs[c.share[(c.turn+i)%len(c.share)]])
	}
	c.turn++
	c.args = append(args, c.tail...)
	err := c.conn.get().DoRawWriteTo(ctx, &c.buf, c.args...).Err()
	if err != nil {
		return nil, c.conn.check(err)
	}
	key, ds, err := poppedOfKey(c.buf.Bytes(), c.ds[:0])
	if cap(ds) > cap(c.ds) {
		c.ds = ds[:0]
	}
	if len(ds) > 0 {
		c.l.shards.received[c.shardOf(key)].Add(int64(len(ds)))
	}
	return ds, err
}

// shardOf is the shard of a ready list in the consumer's share.
func (c *listConsumer) shardOf(key []byte) int {
	for _, k := range c.share {
		if c.l.readys[k] == string(key) {
			return k
		}
	}
	return c.share[0]
}

// poppedOf is poppedOfKey without the key.
func poppedOf(raw []byte) ([]engines.Delivery, error) {
	_, ds, err := poppedOfKey(raw, nil)
	return ds, err
}

// poppedOfKey reads a raw BLMPOP reply, [key, [element...]] or null on timeout, appending the
// deliveries to ds[:0]; payloads (and the key) are slices of raw, so a popped message costs no
// allocation of its own.
func poppedOfKey(raw []byte, ds []engines.Delivery) (key []byte, _ []engines.Delivery, err error) {
	r := rawReply{b: raw}
	n, null, err := r.array()
	if err != nil || null {
		return nil, nil, err
	}
	if n != 2 {
		return nil, nil, fmt.Errorf("BLMPOP: reply of %d elements", n)
	}
	if key, _, err = r.bulk(); err != nil {
		return nil, nil, err
	}
	m, _, err := r.array()
	if err != nil {
		return nil, nil, err
	}
	ds = ds[:0]
	for range m {
		pl, _, err := r.bulk()
		if err != nil {
			return nil, nil, err
		}
		ds = append(ds, engines.Delivery{Payload: pl})
	}
	return key, ds, nil
}

// popEnd is the end of the ready list consumers take from: the other end from the producers'.
func (l *listDesign) popEnd() string {
	if l.opts.Push == "rpush" {
		return "LEFT"
	}
	return "RIGHT"
}

// popCount is how many elements one pop takes at most.
func popCount(o ListOptions) int { return max(o.Count, 1) }

// seconds formats a blocking timeout the way Redis 6+ takes it, in fractional seconds. (go-redis's
// typed BRPOP/BLMOVE round anything under a second up to 1 s.)
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func (c *listConsumer) Ack(context.Context, []engines.Delivery) error { return nil }

func (c *listConsumer) Close() error { return c.conn.close() }
