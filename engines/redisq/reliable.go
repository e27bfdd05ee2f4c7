package redisq

import (
	"context"
	"encoding/hex"
	"errors"
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
// round trip and acknowledges a batch in one pipeline.
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

func newReliableDesign(client redis.UniversalClient, spec engines.Spec) *reliableDesign {
	p := keyPrefix(spec)
	vis := spec.List.VisibilityTimeout
	if vis <= 0 {
		vis = 5 * time.Second
	}
	return &reliableDesign{
		listDesign: *newListDesign(client, spec),
		dead:       p + "dead", deliveries: p + "deliveries", visibility: vis,
		reaperStop: make(chan struct{}), reaperDone: make(chan struct{}),
	}
}

func (r *reliableDesign) processing(consumer string) string {
	return keyPrefix(r.spec) + "processing:" + consumer
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
	keys := []string{r.ready, r.dead}
	for i := 0; i < r.spec.Consumers; i++ {
		keys = append(keys, r.processing(consumerName(i)), r.heartbeat(consumerName(i)))
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

// requeue moves a consumer's processing list back to the consumer end of the ready list, oldest
// first, so that it is redelivered next.
func (r *reliableDesign) requeue(ctx context.Context, consumer string) int64 {
	pop, _ := r.ends()
	var n int64
	for {
		// The processing list has its newest element on the left; moving from the left to the
		// consumers' end leaves the oldest at that end.
		err := r.client.LMove(ctx, r.processing(consumer), r.ready, "LEFT", pop).Err()
		if err != nil {
			return n
		}
		n++
	}
}

func (r *reliableDesign) newConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	c := &reliableConsumer{r: r, name: consumerName(id), conn: dedicated{client: r.client}}
	// A consumer that restarts under its name first returns what it held when it died.
	if err := c.beat(ctx); err != nil {
		return nil, err
	}
	r.Requeued.Add(r.requeue(ctx, c.name))
	return c, nil
}

func (r *reliableDesign) lag(ctx context.Context) (engines.Lag, error) {
	pipe := r.client.Pipeline()
	ready := pipe.LLen(ctx, r.ready)
	procs := make([]*redis.IntCmd, r.spec.Consumers)
	for i := range procs {
		procs[i] = pipe.LLen(ctx, r.processing(consumerName(i)))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return engines.Lag{}, err
	}
	lag := engines.Lag{Backlog: ready.Val()}
	for _, p := range procs {
		lag.Pending += p.Val()
	}
	return lag, nil
}

type reliableConsumer struct {
	r        *reliableDesign
	name     string
	lastBeat time.Time
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
	proc := c.r.processing(c.name)
	pipe := c.conn.get().Pipeline()
	first := pipe.Do(ctx, "BLMOVE", c.r.ready, proc, pop, "LEFT", seconds(popTimeout(c.r.spec)))
	more := make([]*redis.StringCmd, c.extra)
	for i := range more {
		more[i] = pipe.LMove(ctx, c.r.ready, proc, pop, "LEFT")
	}
	_, _ = pipe.Exec(ctx)
	// The LMOVEs run even when the BLMOVE timed out, and may find a message pushed in between:
	// what any of them moved is this consumer's now and must be delivered.
	vals := make([]string, 0, 1+len(more))
	v, err := first.Text()
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
		return nil, nil
	}
	if c.r.spec.List.MaxDeliveries > 0 {
		return c.counted(ctx, vals)
	}
	ds := make([]engines.Delivery, len(vals))
	for i, v := range vals {
		ds[i] = engines.Delivery{Payload: []byte(v), Handle: v}
	}
	return ds, nil
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
func (c *reliableConsumer) counted(ctx context.Context, vals []string) ([]engines.Delivery, error) {
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
			ds = append(ds, engines.Delivery{Payload: []byte(v), Handle: v})
			continue
		}
		// Delivered too often: park it in the dead-letter list instead of delivering it again.
		tx := c.r.client.TxPipeline()
		tx.LPush(ctx, c.r.dead, v)
		tx.LRem(ctx, c.r.processing(c.name), 1, v)
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
	proc := c.r.processing(c.name)
	pipe := c.conn.get().Pipeline()
	for _, d := range ds {
		v := d.Handle.(string)
		pipe.LRem(ctx, proc, -1, v)
		if counted {
			pipe.Del(ctx, c.r.deliveryKey(v))
		}
	}
	_, err := pipe.Exec(ctx)
	return c.conn.check(err)
}

func (c *reliableConsumer) Close() error { return c.conn.close() }
