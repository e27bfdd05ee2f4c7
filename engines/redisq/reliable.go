package redisq

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// reliableDesign is the reliable-queue pattern on lists: a consumer BLMOVEs a message from the
// ready list to a processing list of its own, does the work, then LREMs that exact element (each
// message is unique: it carries producer id and sequence number). A consumer keeps a heartbeat key
// alive; a reaper returns the processing list of a consumer whose heartbeat has expired (longer
// than the visibility timeout) to the ready list. With max_deliveries, deliveries are counted per
// message (INCR), and a message delivered more often goes to the dead-letter list instead; without
// it nothing reads the counts, so none are kept. A consumer moves up to list.count messages per
// round trip and acknowledges a batch in one pipeline. With shards, each shard has its ready list
// and each consumer a processing list per shard of its share (named with the shard's hash tag, so
// a move stays within one cluster slot); a consumer visits its shards in turn.
type reliableDesign struct {
	listDesign
	dead       string
	deliveries string
	visibility time.Duration

	reaperStop chan struct{}
	reaperDone chan struct{}
	stopOnce   sync.Once
	// Requeued counts messages the reaper returned; DeadLettered counts dead-lettered ones.
	Requeued, DeadLettered atomic.Int64
}

func newReliableDesign(client redis.UniversalClient, spec engines.Spec, sh *shards) *reliableDesign {
	p := keyPrefix(spec)
	vis := spec.List.VisibilityTimeout
	if vis <= 0 {
		vis = 5 * time.Second
	}
	return &reliableDesign{
		listDesign: *newListDesign(client, spec, sh),
		dead:       p + "dead", deliveries: p + "deliveries", visibility: vis,
		reaperStop: make(chan struct{}), reaperDone: make(chan struct{}),
	}
}

// processing is consumer's processing list for shard k.
func (r *reliableDesign) processing(consumer string, k int) string {
	return ShardKey(keyPrefix(r.spec)+"processing:"+consumer, k, r.shards.n)
}

// keys is every ready and processing list.
func (r *reliableDesign) keys() []string {
	keys := append([]string(nil), r.readys...)
	for i := 0; i < r.spec.Consumers; i++ {
		for k := 0; k < r.shards.n; k++ {
			keys = append(keys, r.processing(consumerName(i), k))
		}
	}
	return keys
}
func (r *reliableDesign) heartbeat(consumer string) string {
	return keyPrefix(r.spec) + "heartbeat:" + consumer
}

func (r *reliableDesign) setup(ctx context.Context) error {
	go r.reap()
	return nil
}

// stats reports the dead-letter list's length and what the reaper requeued.
func (r *reliableDesign) stats(ctx context.Context) map[string]int64 {
	n, _ := r.client.LLen(ctx, r.dead).Result()
	return map[string]int64{"dead_letters": n, "requeued": r.Requeued.Load(), "dead_lettered": r.DeadLettered.Load()}
}

func (r *reliableDesign) teardown(ctx context.Context) error {
	r.stopOnce.Do(func() { close(r.reaperStop) })
	<-r.reaperDone
	keys := append(r.keys(), r.dead)
	for i := 0; i < r.spec.Consumers; i++ {
		keys = append(keys, r.heartbeat(consumerName(i)))
	}
	return r.client.Del(ctx, keys...).Err()
}

// ends says which end of the ready list consumers take from.
func (r *reliableDesign) ends() (pop, push string) {
	if r.spec.List.Push == "rpush" {
		return "LEFT", "RIGHT"
	}
	return "RIGHT", "LEFT"
}

// reap runs every half visibility timeout until teardown.
func (r *reliableDesign) reap() {
	defer close(r.reaperDone)
	t := time.NewTicker(r.visibility / 2)
	defer t.Stop()
	for {
		select {
		case <-r.reaperStop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.visibility)
		for i := 0; i < r.spec.Consumers; i++ {
			name := consumerName(i)
			alive, err := r.client.Exists(ctx, r.heartbeat(name)).Result()
			if err != nil || alive == 1 {
				continue
			}
			r.Requeued.Add(r.requeue(ctx, name))
		}
		cancel()
	}
}

// requeue moves a consumer's processing lists back to the consumer end of their shards' ready
// lists, oldest first, so that they are redelivered next.
func (r *reliableDesign) requeue(ctx context.Context, consumer string) int64 {
	pop, _ := r.ends()
	var n int64
	for k, ready := range r.readys {
		for {
			// The processing list has its newest element on the left; moving from the left to the
			// consumers' end leaves the oldest at that end.
			err := r.client.LMove(ctx, r.processing(consumer, k), ready, "LEFT", pop).Err()
			if err != nil {
				break
			}
			n++
		}
	}
	return n
}

func (r *reliableDesign) newConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	m, members := member(id, r.spec.Consumers, 1)
	c := &reliableConsumer{r: r, name: consumerName(id), share: r.shards.share(m, members), conn: dedicated{client: r.client}}
	// A consumer that restarts under its name first returns what it held when it died.
	if err := c.beat(ctx); err != nil {
		return nil, err
	}
	r.Requeued.Add(r.requeue(ctx, c.name))
	return c, nil
}

// lag is the ready lists' lengths (backlog) and the processing lists' (pending), per shard.
func (r *reliableDesign) lag(ctx context.Context) (engines.Lag, error) {
	n := r.shards.n
	pipe := r.client.Pipeline()
	ready := make([]*redis.IntCmd, n)
	procs := make([]*redis.IntCmd, n*r.spec.Consumers)
	for k := 0; k < n; k++ {
		ready[k] = pipe.LLen(ctx, r.readys[k])
		for i := 0; i < r.spec.Consumers; i++ {
			procs[k*r.spec.Consumers+i] = pipe.LLen(ctx, r.processing(consumerName(i), k))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return engines.Lag{}, err
	}
	var lag engines.Lag
	backlog, pending := make([]int64, n), make([]int64, n)
	for k := 0; k < n; k++ {
		backlog[k] = ready[k].Val()
		for i := 0; i < r.spec.Consumers; i++ {
			pending[k] += procs[k*r.spec.Consumers+i].Val()
		}
		lag.Backlog += backlog[k]
		lag.Pending += pending[k]
	}
	r.shards.perShard(&lag, backlog, pending)
	return lag, nil
}

type reliableConsumer struct {
	r    *reliableDesign
	name string
	// share is the shards this consumer moves from, visited in turn; empty counts the visits in a
	// row that found nothing (see Receive).
	share       []int
	turn, empty int
	lastBeat    time.Time
	// extra is how many non-blocking LMOVEs follow the next BLMOVE (see Receive).
	extra int
	// conn carries the moves and acknowledgements (the heartbeat and the reaper use the client).
	conn dedicated
}

func (c *reliableConsumer) beat(ctx context.Context) error {
	c.lastBeat = time.Now()
	return c.r.client.Set(ctx, c.r.heartbeat(c.name), "1", c.r.visibility).Err()
}

// deliveryKey is the counter of one message's deliveries, named by the part of the payload that
// identifies it (the stamp's producer, run tag and sequence number), in hex. A string key with
// INCR rather than a hash field keeps the design to commands every Redis-protocol server has.
func (r *reliableDesign) deliveryKey(payload string) string {
	id := payload
	if len(id) >= 24 {
		id = id[4:24]
	}
	return r.deliveries + ":" + hex.EncodeToString([]byte(id))
}

// Receive moves up to list.count messages to this consumer's processing list in one round trip:
// a pipeline of one BLMOVE (which waits for the first message) followed by non-blocking LMOVEs.
// The server runs a client's pipeline in order, so the LMOVEs run as soon as the BLMOVE is served
// and each takes one more message if there is one. Moves are one element each (there is no
// multi-element LMOVE), so the number of LMOVEs follows the load: it doubles while they all find
// a message and falls to what was found otherwise, so an idle or trickling list is not asked
// count-1 times for nothing. With max_deliveries, the delivery counters are INCRed in a second
// round trip, pipelined.
func (c *reliableConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	if time.Since(c.lastBeat) > c.r.visibility/4 {
		if err := c.beat(ctx); err != nil {
			return nil, err
		}
	}
	pop, _ := c.r.ends()
	// BLMOVE has one source, so a consumer with several shards visits one per call: without
	// blocking while a shard of its share had messages lately, and blocking for a share of the
	// pop timeout once a whole round found nothing (a message arriving on another shard then
	// waits at most that share).
	k := c.share[c.turn%len(c.share)]
	c.turn++
	ready, proc := c.r.readys[k], c.r.processing(c.name, k)
	pipe := c.conn.get().Pipeline()
	var first redis.Cmder
	if len(c.share) == 1 || c.empty >= len(c.share) {
		first = pipe.Do(ctx, "BLMOVE", ready, proc, pop, "LEFT", seconds(max(popTimeout(c.r.spec)/time.Duration(len(c.share)), 10*time.Millisecond)))
	} else {
		first = pipe.LMove(ctx, ready, proc, pop, "LEFT")
	}
	more := make([]*redis.StringCmd, c.extra)
	for i := range more {
		more[i] = pipe.LMove(ctx, ready, proc, pop, "LEFT")
	}
	_, _ = pipe.Exec(ctx)
	// The LMOVEs run even when the BLMOVE timed out, and may find a message pushed in between:
	// what any of them moved is this consumer's now and must be delivered.
	vals := make([]string, 0, 1+len(more))
	v, err := firstText(first)
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, c.conn.check(err)
	}
	if err == nil {
		vals = append(vals, v)
	}
	found := 0
	for _, m := range more {
		// A move that failed (a lost connection) moved nothing; the next call reports the error
		// if it persists.
		if m.Err() == nil {
			vals = append(vals, m.Val())
			found++
		}
	}
	c.adapt(found)
	if len(vals) == 0 {
		c.empty++
		return nil, nil
	}
	c.empty = 0
	c.r.shards.received[k].Add(int64(len(vals)))
	if c.r.spec.List.MaxDeliveries > 0 {
		return c.counted(ctx, k, vals)
	}
	ds := make([]engines.Delivery, len(vals))
	for i, v := range vals {
		ds[i] = engines.Delivery{Payload: []byte(v), Handle: reliableHandle{shard: k, value: v}}
	}
	return ds, nil
}

// reliableHandle is a delivery's handle: the shard it was moved from and the element.
type reliableHandle struct {
	shard int
	value string
}

// firstText is the element a BLMOVE (Do) or LMOVE moved.
func firstText(c redis.Cmder) (string, error) {
	switch c := c.(type) {
	case *redis.Cmd:
		return c.Text()
	case *redis.StringCmd:
		return c.Result()
	}
	return "", fmt.Errorf("unexpected command %T", c)
}

// adapt sets how many LMOVEs follow the next BLMOVE from how many of this call's found a message:
// twice as many (at least one, at most count-1) when all did, as many as did otherwise.
func (c *reliableConsumer) adapt(found int) {
	limit := popCount(c.r.spec) - 1
	if found == c.extra {
		c.extra = min(max(2*c.extra, 1), limit)
	} else {
		c.extra = found
	}
}

// counted increments each message's delivery counter (one pipeline) and dead-letters a message
// delivered more than MaxDeliveries times instead of delivering it again.
func (c *reliableConsumer) counted(ctx context.Context, k int, vals []string) ([]engines.Delivery, error) {
	pipe := c.conn.get().Pipeline()
	incrs := make([]*redis.IntCmd, len(vals))
	for i, v := range vals {
		incrs[i] = pipe.Incr(ctx, c.r.deliveryKey(v))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, c.conn.check(err)
	}
	max := int64(c.r.spec.List.MaxDeliveries)
	ds := make([]engines.Delivery, 0, len(vals))
	for i, v := range vals {
		if incrs[i].Val() <= max {
			ds = append(ds, engines.Delivery{Payload: []byte(v), Handle: reliableHandle{shard: k, value: v}})
			continue
		}
		// Delivered too often: park it in the dead-letter list instead of delivering it again.
		tx := c.r.client.TxPipeline()
		tx.LPush(ctx, c.r.dead, v)
		tx.LRem(ctx, c.r.processing(c.name, k), 1, v)
		tx.Del(ctx, c.r.deliveryKey(v))
		if _, err := tx.Exec(ctx); err != nil {
			return ds, err
		}
		c.r.DeadLettered.Add(1)
	}
	return ds, nil
}

// Ack removes the exact elements from the processing list, and their delivery counts, in one
// pipeline. LREM counts from the tail (-1): the processing list has its oldest element on the
// right, and messages are acknowledged in the order they were received, so each LREM finds its
// element at once instead of scanning the whole batch.
func (c *reliableConsumer) Ack(ctx context.Context, ds []engines.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	counted := c.r.spec.List.MaxDeliveries > 0
	pipe := c.conn.get().Pipeline()
	for _, d := range ds {
		h := d.Handle.(reliableHandle)
		pipe.LRem(ctx, c.r.processing(c.name, h.shard), -1, h.value)
		if counted {
			pipe.Del(ctx, c.r.deliveryKey(h.value))
		}
	}
	_, err := pipe.Exec(ctx)
	return c.conn.check(err)
}

func (c *reliableConsumer) Close() error { return c.conn.close() }
