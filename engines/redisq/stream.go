package redisq

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// streamDesign: producers XADD to one stream (optionally trimmed with MAXLEN); consumers read it
// in a consumer group with XREADGROUP, first their own pending entries (ID 0, after a restart)
// and then new ones (>), and XACK after the work (or before it, or NOACK). Consumers may claim
// entries left pending by others (XAUTOCLAIM, following the cursor to 0-0), and move an entry
// delivered too often to a dead-letter stream (copy, then XACK). Several groups on one stream
// (fan-out) each receive every entry. With shards there are N streams, each with every group;
// a consumer reads its share of them in one XREADGROUP.
type streamDesign struct {
	client     redis.UniversalClient
	spec       engines.Spec
	opts       StreamOptions
	shards     *shards
	keys       []string // one stream per shard
	dead       string
	groupNames []string
	xaddPrefix [][]any // per shard; see addPrefix
}

const streamField = "d"

func newStreamDesign(client redis.UniversalClient, spec engines.Spec, sh *shards) *streamDesign {
	s := &streamDesign{client: client, spec: spec, opts: optionsOf(spec).Stream, shards: sh, keys: sh.keys(streamKey(spec)), dead: keyPrefix(spec) + "dead", groupNames: streamGroups(spec)}
	for _, k := range s.keys {
		s.xaddPrefix = append(s.xaddPrefix, s.addPrefix(k))
	}
	return s
}

func (s *streamDesign) groups() int { return max(len(s.groupNames), 1) }

func (s *streamDesign) setup(ctx context.Context) error {
	for _, key := range s.keys {
		for _, g := range s.groupNames {
			err := s.client.XGroupCreateMkStream(ctx, key, g, s.opts.GroupStart).Err()
			if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
				return err
			}
		}
	}
	return nil
}

// stats reports the dead-letter stream's length.
func (s *streamDesign) stats(ctx context.Context) map[string]int64 {
	n, _ := s.client.XLen(ctx, s.dead).Result()
	return map[string]int64{"dead_letters": n}
}

func (s *streamDesign) teardown(ctx context.Context) error {
	return s.client.Del(ctx, ownKeys(s.spec, append(append([]string(nil), s.keys...), s.dead)...)...).Err()
}

// addPrefix makes every XADD's arguments before the payload, boxed once: the typed XAdd builds an
// XAddArgs, a values slice and boxes the key for each message, which was a fifth of the
// producer's CPU on a stream at 200,000 msg/s.
// It is built once, before producers start, and only read after.
func (s *streamDesign) addPrefix(key string) []any {
	p := []any{"XADD", key}
	if s.opts.MaxLen > 0 {
		if s.opts.ExactTrim {
			p = append(p, "MAXLEN", s.opts.MaxLen)
		} else {
			p = append(p, "MAXLEN", "~", s.opts.MaxLen)
		}
	}
	return append(p, "*", streamField)
}

// push queues one XADD per payload, to its shard's stream. The arguments are built in buf (see
// pushBuf) and each reply ID is read into buf's room for it, not into a new string.
func (s *streamDesign) push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte, byShard [][]int, buf *pushBuf) []redis.Cmder {
	width := len(s.xaddPrefix[0]) + 1
	cmds := buf.start(len(payloads), width*len(payloads))
	add := func(k, i int) {
		lo := len(buf.args)
		buf.args = append(buf.args, s.xaddPrefix[k]...)
		buf.args = append(buf.args, buf.payload(payloads[i]))
		cmds[i] = redis.NewZeroCopyStringCmd(ctx, buf.idBuf(i, len(payloads)), buf.since(lo)...)
	}
	if byShard == nil {
		for i := range payloads {
			add(0, i)
		}
	} else {
		for k, ix := range byShard {
			for _, i := range ix {
				add(k, i)
			}
		}
	}
	// Queued at once: the pipeline's command slice is allocated once, not grown per XADD.
	_ = pipe.BatchProcess(ctx, cmds...)
	return cmds
}

func (s *streamDesign) groupOf(consumer int) int { return consumer % len(s.groupNames) }

type streamConsumer struct {
	s     *streamDesign
	group string
	name  string
	// share is the shards this consumer reads (all of them with one consumer per group).
	share []int
	// replaying is true while the consumer reads its own pending entries (ID 0).
	replaying bool
	lastClaim time.Time
	// conn carries XREADGROUP and XACK (claiming, rare, uses the pooled client).
	conn dedicated
	// buf holds the last XREADGROUP reply: payloads are slices of it, valid until the next
	// Receive (as for the list consumer).
	buf bytes.Buffer
	// countArg and blockArg are XREADGROUP's COUNT and BLOCK, boxed once; args (the argument
	// list), ds and ids (the deliveries and their handles) and ackArgs are reused from Receive
	// to Receive: a delivery and its handle are valid until the next Receive, as the payload.
	countArg, blockArg any
	args, ackArgs      []any
	ds                 []engines.Delivery
	ids                []streamEntry
}

func (s *streamDesign) newConsumer(_ context.Context, id int) (engines.Consumer, error) {
	m, members := member(id, s.spec.Consumers, len(s.groupNames))
	return &streamConsumer{s: s, group: s.groupNames[s.groupOf(id)], name: consumerName(id), replaying: true, lastClaim: time.Now(),
		share: s.shards.share(m, members), conn: dedicated{client: s.client},
		countArg: max(s.opts.Count, 1), blockArg: s.opts.Block.Milliseconds()}, nil
}

// streamEntry is a delivery's handle: the shard it was read from and its entry ID.
type streamEntry struct {
	shard int
	id    string
}

// shardOfKey is the shard of a stream key in the consumer's share (its first when unknown).
func (c *streamConsumer) shardOfKey(key []byte) int {
	for _, k := range c.share {
		if c.s.keys[k] == string(key) {
			return k
		}
	}
	return c.share[0]
}

func consumerName(id int) string { return "c" + strconv.Itoa(id) }

func (c *streamConsumer) Receive(ctx context.Context) ([]engines.Delivery, error) {
	opts := c.s.opts
	if opts.ClaimIdle > 0 && time.Since(c.lastClaim) >= opts.ClaimIdle/2 {
		c.lastClaim = time.Now()
		ds, err := c.claim(ctx)
		if err != nil || len(ds) > 0 {
			return ds, err
		}
	}
	id := ">"
	if c.replaying {
		id = "0"
	}
	// XREADGROUP through Do, not go-redis's XReadGroup: its typed reply builds a map per entry,
	// and the consumer only needs each entry's ID and its one field (see entriesOf).
	args := append(c.args[:0], "XREADGROUP", "GROUP", c.group, c.name, "COUNT", c.countArg)
	if !c.replaying {
		// Replaying reads with no BLOCK: the pending history is answered at once.
		args = append(args, "BLOCK", c.blockArg)
	}
	if opts.Ack == "noack" {
		args = append(args, "NOACK")
	}
	args = append(args, "STREAMS")
	for _, k := range c.share {
		args = append(args, c.s.keys[k])
	}
	for range c.share {
		args = append(args, id)
	}
	c.args = args
	c.buf.Reset()
	err := c.conn.check(c.conn.get().DoRawWriteTo(ctx, &c.buf, args...).Err())
	var ds []engines.Delivery
	if err == nil {
		ds, c.ids, err = entriesOfKeysInto(c.buf.Bytes(), c.shardOfKey, c.ds[:0], c.ids[:0])
		if cap(ds) > cap(c.ds) {
			c.ds = ds[:0]
		}
		c.count(ds)
	}
	if err != nil && strings.HasPrefix(err.Error(), "NOGROUP") {
		// The server lost the group (a restart without persistence): make it again, from the
		// start of whatever the stream now holds, and report the error once.
		_ = c.s.setup(ctx)
	}
	if err != nil {
		// A reply lost with the connection may have delivered entries to this consumer that it
		// never saw: they sit in its pending list. Read that first when the server answers again.
		c.replaying = true
		return nil, err
	}
	if c.replaying && len(ds) == 0 {
		c.replaying = false
	}
	if opts.Ack == "before" && len(ds) > 0 {
		if err := c.xack(ctx, ds); err != nil {
			return ds, err
		}
	}
	return ds, nil
}

// count adds deliveries read by XREADGROUP to their shards' received counters.
func (c *streamConsumer) count(ds []engines.Delivery) {
	if len(c.share) == 1 {
		c.s.shards.received[c.share[0]].Add(int64(len(ds)))
		return
	}
	for _, d := range ds {
		c.s.shards.received[d.Handle.(*streamEntry).shard].Add(1)
	}
}

// entriesOf is entriesOfKeys for one stream (shard 0).
func entriesOf(raw []byte) ([]engines.Delivery, error) {
	return entriesOfKeys(raw, func([]byte) int { return 0 })
}

// entriesOfKeys reads the deliveries out of a raw XREADGROUP reply: under RESP3 a map from stream
// key to entries, under RESP2 an array of [key, entries] pairs, or null when BLOCK timed out.
// Each entry is [id, [field, value, ...]], with no fields (null) for an entry deleted while
// pending, which is skipped. Payloads and IDs are read in place (they alias raw); each handle (a
// *streamEntry: the shard, from shardOf of the stream's key, and the ID) points into one slice
// per stream of the reply, so an entry costs no allocation of its own.
func entriesOfKeys(raw []byte, shardOf func(key []byte) int) ([]engines.Delivery, error) {
	ds, _, err := entriesOfKeysInto(raw, shardOf, nil, nil)
	return ds, err
}

// entriesOfKeysInto is entriesOfKeys appending to ds and ids (the handles' room, returned for
// reuse: a handle points into it, so it is replaced rather than grown when full).
func entriesOfKeysInto(raw []byte, shardOf func(key []byte) int, ds []engines.Delivery, ids []streamEntry) ([]engines.Delivery, []streamEntry, error) {
	r := rawReply{b: raw}
	isMap := len(raw) > 0 && raw[0] == '%'
	n, null, err := r.array()
	if err != nil || null {
		return nil, ids, err
	}
	for st := 0; st < n; {
		if isMap {
			st += 2
		} else {
			st++
			if k, _, err := r.array(); err != nil || k != 2 {
				return nil, ids, fmt.Errorf("XREADGROUP: unexpected stream reply (%v)", err)
			}
		}
		key, _, err := r.bulk()
		if err != nil {
			return nil, ids, err
		}
		shard := shardOf(key)
		m, _, err := r.array()
		if err != nil {
			return nil, ids, err
		}
		if cap(ds)-len(ds) < m {
			ds = append(make([]engines.Delivery, 0, len(ds)+m), ds...)
		}
		if cap(ids)-len(ids) < m {
			// A new room: the handles given out so far point into the old one, which stays.
			ids = make([]streamEntry, 0, max(m, 2*cap(ids)))
		}
		for i := 0; i < m; i++ {
			if k, _, err := r.array(); err != nil || k != 2 {
				return nil, ids, fmt.Errorf("XREADGROUP: unexpected entry (%v)", err)
			}
			id, _, err := r.bulk()
			if err != nil {
				return nil, ids, err
			}
			f, null, err := r.array()
			if err != nil {
				return nil, ids, err
			}
			// The ID is read in place, like the payload (valid until the next Receive).
			ids = append(ids, streamEntry{shard: shard, id: unsafe.String(unsafe.SliceData(id), len(id))})
			e := &ids[len(ids)-1]
			var payload []byte
			found := false
			if f%2 != 0 {
				return nil, ids, fmt.Errorf("XREADGROUP: odd field list in entry %s", id)
			}
			for j := 0; j < f; j += 2 {
				name, _, err := r.bulk()
				if err != nil {
					return nil, ids, err
				}
				v, _, err := r.bulk()
				if err != nil {
					return nil, ids, err
				}
				if !found && string(name) == streamField {
					payload, found = v, true
				}
			}
			// An entry without the payload field (written by something other than qbench) is
			// delivered with no payload, so the runner counts it as foreign and acknowledges
			// it; skipped, it stayed pending and unacknowledged for the whole run.
			if !null {
				if !found {
					payload = nil
				}
				ds = append(ds, engines.Delivery{Payload: payload, Handle: e})
			}
		}
	}
	return ds, ids, nil
}

func (c *streamConsumer) Ack(ctx context.Context, ds []engines.Delivery) error {
	if c.s.opts.Ack != "after" {
		return nil
	}
	return c.xack(ctx, ds)
}

// xack acknowledges deliveries with one XACK per shard they came from (pipelined when several).
func (c *streamConsumer) xack(ctx context.Context, ds []engines.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	if len(c.share) == 1 {
		// One XACK, its arguments in ackArgs and each ID boxed as a pointer to the handle's
		// (a *string fits an interface without an allocation; a string does not).
		k := c.share[0]
		args := append(c.ackArgs[:0], "XACK", c.s.keys[k], c.group)
		for _, d := range ds {
			switch h := d.Handle.(type) {
			case *streamEntry: // read by entriesOfKeys
				args = append(args, &h.id)
			case streamEntry: // claimed
				args = append(args, h.id)
			}
		}
		c.ackArgs = args
		if len(args) == 3 {
			return nil
		}
		cmd := redis.NewIntCmd(ctx, args...)
		err := c.conn.get().Process(ctx, cmd)
		clear(args)
		return c.conn.check(err)
	}
	ids := make([][]string, c.s.shards.n)
	for _, d := range ds {
		var e streamEntry
		switch h := d.Handle.(type) {
		case *streamEntry: // read by entriesOfKeys
			e = *h
		case streamEntry: // claimed
			e = h
		default:
			continue
		}
		ids[e.shard] = append(ids[e.shard], e.id)
	}
	pipe := c.conn.get().Pipeline()
	for k, ix := range ids {
		if len(ix) > 0 {
			pipe.XAck(ctx, c.s.keys[k], c.group, ix...)
		}
	}
	_, err := pipe.Exec(ctx)
	return c.conn.check(err)
}

// claim runs claimShard on each shard of the consumer's share.
func (c *streamConsumer) claim(ctx context.Context) ([]engines.Delivery, error) {
	var ds []engines.Delivery
	for _, k := range c.share {
		got, err := c.claimShard(ctx, k)
		c.s.shards.received[k].Add(int64(len(got)))
		ds = append(ds, got...)
		if err != nil {
			return ds, err
		}
	}
	return ds, nil
}

// claimShard first dead-letters entries of shard k delivered MaxDeliveries times or more (copy
// to the dead-letter stream, then XACK), then takes over every entry idle for ClaimIdle with
// XAUTOCLAIM, following the cursor until it returns to 0-0.
func (c *streamConsumer) claimShard(ctx context.Context, k int) ([]engines.Delivery, error) {
	opts := c.s.opts
	key := c.s.keys[k]
	if opts.MaxDeliveries > 0 {
		pending, err := c.s.client.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: key, Group: c.group, Idle: opts.ClaimIdle, Start: "-", End: "+", Count: 1000,
		}).Result()
		if err != nil {
			return nil, err
		}
		for _, p := range pending {
			if p.RetryCount < opts.MaxDeliveries {
				continue
			}
			// Take the entry first (XCLAIM JUSTID leaves the delivery count alone): of several
			// consumers reaching it at once only one wins, so it is dead-lettered once.
			won, err := c.s.client.XClaimJustID(ctx, &redis.XClaimArgs{
				Stream: key, Group: c.group, Consumer: c.name, MinIdle: opts.ClaimIdle, Messages: []string{p.ID},
			}).Result()
			if err != nil {
				return nil, err
			}
			if len(won) == 0 {
				continue
			}
			entries, err := c.s.client.XRange(ctx, key, p.ID, p.ID).Result()
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if err := c.s.client.XAdd(ctx, &redis.XAddArgs{Stream: c.s.dead, Values: e.Values}).Err(); err != nil {
					return nil, err
				}
			}
			if err := c.s.client.XAck(ctx, key, c.group, p.ID).Err(); err != nil {
				return nil, err
			}
		}
	}
	var ds []engines.Delivery
	cursor := "0-0"
	for {
		msgs, next, err := c.s.client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: key, Group: c.group, Consumer: c.name, MinIdle: opts.ClaimIdle, Start: cursor, Count: max(opts.Count, 1),
		}).Result()
		if err != nil {
			return ds, err
		}
		for _, m := range msgs {
			v, _ := m.Values[streamField].(string) // none: foreign, as in entriesOfKeys
			ds = append(ds, engines.Delivery{Payload: []byte(v), Handle: streamEntry{shard: k, id: m.ID}})
		}
		if next == "0-0" || next == "" || len(ds) >= 1000 {
			return ds, nil
		}
		cursor = next
	}
}

func (c *streamConsumer) Close() error { return c.conn.close() }

// lag reads, for each shard, each group's lag and pending count (XINFO GROUPS) and the oldest
// pending entry's idle time (XPENDING with COUNT 1), summed (backlog, pending) or maximised
// (idle) over groups and shards; per shard too when there are several. Each kind of read is one
// pipeline over the shards, so many shards still fit the sampler's deadline.
func (s *streamDesign) lag(ctx context.Context) (engines.Lag, error) {
	pipe := s.client.Pipeline()
	infos := make([]*redis.XInfoGroupsCmd, len(s.keys))
	for k, key := range s.keys {
		infos[k] = pipe.XInfoGroups(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return engines.Lag{}, err
	}
	var lag engines.Lag
	backlog, pending := make([]int64, len(s.keys)), make([]int64, len(s.keys))
	pipe = s.client.Pipeline()
	var oldest []*redis.XPendingExtCmd
	for k, info := range infos {
		for _, g := range info.Val() {
			if g.Lag > 0 {
				backlog[k] += g.Lag
			}
			pending[k] += g.Pending
			if g.Pending > 0 {
				oldest = append(oldest, pipe.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: s.keys[k], Group: g.Name, Start: "-", End: "+", Count: 1}))
			}
		}
		lag.Backlog += backlog[k]
		lag.Pending += pending[k]
	}
	if len(oldest) > 0 {
		_, _ = pipe.Exec(ctx) // the idle time is best effort, as before
		for _, c := range oldest {
			if p := c.Val(); len(p) > 0 {
				lag.OldestPendingNs = max(lag.OldestPendingNs, int64(p[0].Idle))
			}
		}
	}
	s.shards.perShard(&lag, backlog, pending)
	return lag, nil
}
