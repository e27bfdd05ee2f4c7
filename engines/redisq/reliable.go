package redisq

import (
	"context"
	"encoding/hex"
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
// it nothing reads the counts, so none are kept. A consumer moves up to redis.list.count messages per
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
	vis := optionsOf(spec).List.VisibilityTimeout
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
	if r.opts.Push == "rpush" {
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
	c.cmds.init(r, c.name, max(popTimeout(r.opts)/time.Duration(len(c.share)), 10*time.Millisecond))
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
	// cmds holds the moves' and acknowledgements' commands, per shard, and the buffers their
	// replies are read into: all reused from call to call (see reliableCmds).
	cmds reliableCmds
}

func (c *reliableConsumer) beat(ctx context.Context) error {
	c.lastBeat = time.Now()
	return c.r.client.Set(ctx, c.r.heartbeat(c.name), "1", c.r.visibility).Err()
}

// deliveryKey is the counter of one message's deliveries, named by the part of the payload that
// identifies it (the stamp's producer, run tag and sequence number), in hex. A string key with
// INCR rather than a hash field keeps the design to commands every Redis-protocol server has.
func (r *reliableDesign) deliveryKey(payload []byte) string {
	id := payload
	if len(id) >= 24 {
		id = id[4:24]
	}
	return r.deliveries + ":" + hex.EncodeToString(id)
}

// Receive moves up to redis.list.count messages to this consumer's processing list in one round trip:
// a pipeline of one BLMOVE (which waits for the first message) followed by non-blocking LMOVEs.
// The server runs a client's pipeline in order, so the LMOVEs run as soon as the BLMOVE is served
// and each takes one more message if there is one. Moves are one element each (there is no
// multi-element LMOVE), so the number of LMOVEs follows the load: it doubles while they all find
// a message and falls to what was found otherwise, so an idle or trickling list is not asked
// count-1 times for nothing. With max_deliveries, the delivery counters are INCRed in a second
// round trip, pipelined. The replies are read raw into one buffer (see reliableCmds); payloads
// and handles are valid until the next Receive.
func (c *reliableConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	if time.Since(c.lastBeat) > c.r.visibility/4 {
		if err := c.beat(ctx); err != nil {
			return nil, err
		}
	}
	// BLMOVE has one source, so a consumer with several shards visits one per call: without
	// blocking while a shard of its share had messages lately, and blocking for a share of the
	// pop timeout once a whole round found nothing (a message arriving on another shard then
	// waits at most that share).
	k := c.share[c.turn%len(c.share)]
	c.turn++
	block := len(c.share) == 1 || c.empty >= len(c.share)
	n := 1 + c.extra
	err := c.cmds.move(ctx, c.conn.get(), k, block, n)
	// The LMOVEs run even when the BLMOVE timed out, and may find a message pushed in between:
	// what any of them moved is this consumer's now and must be delivered. A lost connection
	// leaves the replies read before it: what they moved is delivered too.
	hs := c.cmds.hs[:0]
	r := rawReply{b: c.cmds.buf.Bytes()}
	found := 0
	for i := 0; i < n; i++ {
		v, null, perr := r.moved()
		if i == 0 && perr != nil {
			// No reply (a lost connection), or the server's error reply to the first move.
			if err == nil {
				err = perr
			}
			return nil, c.conn.check(err)
		}
		if perr != nil {
			if _, reply := perr.(redisErr); reply {
				continue // an LMOVE the server refused moved nothing
			}
			break // the replies not read
		}
		if null {
			continue
		}
		hs = append(hs, reliableHandle{shard: k, value: v})
		if i > 0 {
			found++
		}
	}
	_ = c.conn.check(err)
	c.cmds.hs = hs
	c.adapt(found)
	if len(hs) == 0 {
		c.empty++
		return nil, nil
	}
	c.empty = 0
	c.r.shards.received[k].Add(int64(len(hs)))
	ds := c.cmds.ds[:0]
	for i := range hs {
		ds = append(ds, engines.Delivery{Payload: hs[i].value, Handle: &hs[i]})
	}
	c.cmds.ds = ds
	if c.r.opts.MaxDeliveries > 0 {
		return c.counted(ctx, k, ds)
	}
	return ds, nil
}

// reliableHandle is a delivery's handle: the shard it was moved from and the element (a slice
// of the reply buffer). Receive hands out pointers into a reused slice of them.
type reliableHandle struct {
	shard int
	value []byte
}

// adapt sets how many LMOVEs follow the next BLMOVE from how many of this call's found a message:
// twice as many (at least one, at most count-1) when all did, as many as did otherwise.
func (c *reliableConsumer) adapt(found int) {
	limit := popCount(c.r.opts) - 1
	if found == c.extra {
		c.extra = min(max(2*c.extra, 1), limit)
	} else {
		c.extra = found
	}
}

// counted increments each message's delivery counter (one pipeline) and dead-letters a message
// delivered more than MaxDeliveries times instead of delivering it again, filtering ds in place.
func (c *reliableConsumer) counted(ctx context.Context, k int, ds []engines.Delivery) ([]engines.Delivery, error) {
	pipe := c.conn.get().Pipeline()
	incrs := make([]*redis.IntCmd, len(ds))
	for i, d := range ds {
		incrs[i] = pipe.Incr(ctx, c.r.deliveryKey(d.Payload))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, c.conn.check(err)
	}
	max := int64(c.r.opts.MaxDeliveries)
	out := ds[:0]
	for i, d := range ds {
		if incrs[i].Val() <= max {
			out = append(out, d)
			continue
		}
		// Delivered too often: park it in the dead-letter list instead of delivering it again.
		v := d.Payload
		tx := c.r.client.TxPipeline()
		tx.LPush(ctx, c.r.dead, v)
		tx.LRem(ctx, c.r.processing(c.name, k), 1, v)
		tx.Del(ctx, c.r.deliveryKey(v))
		if _, err := tx.Exec(ctx); err != nil {
			return out, err
		}
		c.r.DeadLettered.Add(1)
	}
	return out, nil
}

// Ack removes the exact elements from the processing list, and their delivery counts, in one
// pipeline. LREM counts from the tail (-1): the processing list has its oldest element on the
// right, and messages are acknowledged in the order they were received, so each LREM finds its
// element at once instead of scanning the whole batch.
func (c *reliableConsumer) Ack(ctx context.Context, ds []engines.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	return c.conn.check(c.cmds.ack(ctx, c.conn.get(), ds, c.r.opts.MaxDeliveries > 0))
}

func (c *reliableConsumer) Close() error { return c.conn.close() }
