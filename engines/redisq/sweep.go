package redisq

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// The final sweep (engines.Sweeper): after consumers have stopped, read without consuming what
// the server still holds for each receiving group, so that the runner can tell a backlog (queued)
// from a loss (gone). Everything is read in pages, so a backlog of millions costs memory for one
// page at a time.
//
// What counts as held, per design:
//   - stream: for each group, the entries after its last-delivered ID (not yet delivered to any
//     consumer of the group) and its pending entries (delivered to a consumer, never
//     acknowledged: XAUTOCLAIM or the consumer's replay would deliver them again). Entries
//     trimmed or deleted are not found. With one group, the dead-letter stream too: a message
//     parked there is held, not destroyed. (With several groups the dead-letter copy does not say
//     whose it was, so it is not counted for any: a loss is never hidden behind another group's
//     dead letter.)
//   - list: the ready list.
//   - reliable-list: the ready list, every consumer's processing list and the dead-letter list.
//   - pubsub: nothing is stored, so nothing can be found (engines.ErrNothingStored).
//
// With shards, every shard's keys are read the same way.

// sweepPage is how many entries or elements one command reads.
const sweepPage = 1000

// sweeper is implemented by designs that store messages.
type sweeper interface {
	sweep(ctx context.Context, found func(group int, payload []byte)) error
}

// Sweep reports every message the design still holds (engines.Sweeper).
func (e *engine) Sweep(ctx context.Context, found func(group int, payload []byte)) error {
	s, ok := e.design.(sweeper)
	if !ok {
		return engines.ErrNothingStored
	}
	return s.sweep(ctx, found)
}

func (s *streamDesign) sweep(ctx context.Context, found func(group int, payload []byte)) error {
	for _, key := range s.keys {
		if err := s.sweepStream(ctx, key, found); err != nil {
			return err
		}
	}
	if len(s.groupNames) == 1 {
		return s.rangeAfter(ctx, s.dead, "0-0", func(m redis.XMessage) {
			if v, ok := m.Values[streamField].(string); ok {
				found(0, []byte(v))
			}
		})
	}
	return nil
}

// sweepStream reports what one shard's stream holds for each group.
func (s *streamDesign) sweepStream(ctx context.Context, key string, found func(group int, payload []byte)) error {
	// A stream that is gone (evicted, or the server restarted empty) holds nothing: XINFO
	// GROUPS would fail on it.
	if n, err := s.client.Exists(ctx, key).Result(); err != nil || n == 0 {
		return err
	}
	infos, err := s.client.XInfoGroups(ctx, key).Result()
	if err != nil {
		return err
	}
	last := map[string]string{}
	for _, g := range infos {
		last[g.Name] = g.LastDeliveredID
	}
	for i, name := range s.groupNames {
		id, ok := last[name]
		if !ok {
			// The group is gone but the stream is not (a restart that kept the stream and lost
			// the group): consumers recreate the group from the start, so every entry is owed.
			id = "0-0"
		}
		emit := func(m redis.XMessage) {
			if v, ok := m.Values[streamField].(string); ok {
				found(i, []byte(v))
			}
		}
		if err := s.rangeAfter(ctx, key, id, emit); err != nil {
			return err
		}
		if ok {
			if err := s.sweepPending(ctx, key, name, emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// rangeAfter calls emit for every entry of key with an ID greater than after, a page at a time.
func (s *streamDesign) rangeAfter(ctx context.Context, key, after string, emit func(redis.XMessage)) error {
	start := nextStreamID(after)
	for {
		page, err := s.client.XRangeN(ctx, key, start, "+", sweepPage).Result()
		if err != nil {
			return err
		}
		for _, m := range page {
			emit(m)
		}
		if len(page) < sweepPage {
			return nil
		}
		start = nextStreamID(page[len(page)-1].ID)
	}
}

// sweepPending calls emit for every entry in group's pending entries list that stream key still
// has, fetching a page of payloads in one pipeline (XRANGE id id each: XPENDING gives IDs only).
func (s *streamDesign) sweepPending(ctx context.Context, key, group string, emit func(redis.XMessage)) error {
	start := "-"
	for {
		pel, err := s.client.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: key, Group: group, Start: start, End: "+", Count: sweepPage,
		}).Result()
		if err != nil {
			return err
		}
		if len(pel) == 0 {
			return nil
		}
		pipe := s.client.Pipeline()
		cmds := make([]*redis.XMessageSliceCmd, len(pel))
		for i, p := range pel {
			cmds[i] = pipe.XRangeN(ctx, key, p.ID, p.ID, 1)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		for _, c := range cmds {
			for _, m := range c.Val() { // a trimmed or deleted entry comes back empty
				emit(m)
			}
		}
		if len(pel) < sweepPage {
			return nil
		}
		start = nextStreamID(pel[len(pel)-1].ID)
	}
}

// nextStreamID is the smallest ID greater than id ("ms-seq"), for an exclusive range start that
// every Redis-protocol server accepts (XRANGE's "(" prefix needs Redis 6.2).
func nextStreamID(id string) string {
	msPart, seqPart, _ := strings.Cut(id, "-")
	ms, err1 := strconv.ParseUint(msPart, 10, 64)
	seq, err2 := strconv.ParseUint(seqPart, 10, 64)
	if err1 != nil || err2 != nil {
		return "-"
	}
	if seq == ^uint64(0) {
		return strconv.FormatUint(ms+1, 10) + "-0"
	}
	return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq+1, 10)
}

func (l *listDesign) sweep(ctx context.Context, found func(group int, payload []byte)) error {
	for _, k := range l.readys {
		if err := sweepList(ctx, l.client, k, found); err != nil {
			return err
		}
	}
	return nil
}

// sweepList calls found for every element of key, a page of LRANGE at a time. Nothing moves the
// list while it is read (consumers have stopped; the reliable list's reaper is stopped first).
func sweepList(ctx context.Context, client redis.UniversalClient, key string, found func(group int, payload []byte)) error {
	for start := int64(0); ; start += sweepPage {
		page, err := client.LRange(ctx, key, start, start+sweepPage-1).Result()
		if err != nil {
			return err
		}
		for _, v := range page {
			found(0, []byte(v))
		}
		if len(page) < sweepPage {
			return nil
		}
	}
}

func (r *reliableDesign) sweep(ctx context.Context, found func(group int, payload []byte)) error {
	// The reaper would move processing lists to the ready list while they are read, and an
	// element could slip between two pages: stop it now (the run is over; Teardown would stop it
	// next anyway).
	r.stopOnce.Do(func() { close(r.reaperStop) })
	select {
	case <-r.reaperDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, k := range append(r.keys(), r.dead) {
		if err := sweepList(ctx, r.client, k, found); err != nil {
			return err
		}
	}
	return nil
}

// pendingReporter is implemented by designs that keep, per consumer, what was delivered to it
// and not acknowledged.
type pendingReporter interface {
	pendingByConsumer(ctx context.Context, consumers int) ([]int64, error)
}

// PendingByConsumer is each consumer's unacknowledged deliveries at the end
// (engines.PendingReporter): ErrNothingStored for the designs that keep none (list, pubsub).
func (e *engine) PendingByConsumer(ctx context.Context, consumers int) ([]int64, error) {
	p, ok := e.design.(pendingReporter)
	if !ok {
		return nil, engines.ErrNothingStored
	}
	return p.pendingByConsumer(ctx, consumers)
}

// pendingByConsumer reads each group's PEL summary (XPENDING key group: a count per consumer
// name) on every shard's stream. A stream or group that is gone holds nothing for anyone.
func (s *streamDesign) pendingByConsumer(ctx context.Context, consumers int) ([]int64, error) {
	out := make([]int64, consumers)
	for _, key := range s.keys {
		if n, err := s.client.Exists(ctx, key).Result(); err != nil || n == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		for _, group := range s.groupNames {
			p, err := s.client.XPending(ctx, key, group).Result()
			if err != nil {
				if strings.HasPrefix(err.Error(), "NOGROUP") {
					continue
				}
				return nil, err
			}
			for name, n := range p.Consumers {
				if id, ok := consumerID(name); ok && id < consumers {
					out[id] += n
				}
			}
		}
	}
	return out, nil
}

// pendingByConsumer is the length of each consumer's processing lists, over its shards.
func (r *reliableDesign) pendingByConsumer(ctx context.Context, consumers int) ([]int64, error) {
	pipe := r.client.Pipeline()
	cmds := make([]*redis.IntCmd, 0, consumers*r.shards.n)
	for i := 0; i < consumers; i++ {
		for k := 0; k < r.shards.n; k++ {
			cmds = append(cmds, pipe.LLen(ctx, r.processing(consumerName(i), k)))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	out := make([]int64, consumers)
	for j, c := range cmds {
		out[j/r.shards.n] += c.Val()
	}
	return out, nil
}

// consumerID reads a consumer's index back from its name (consumerName).
func consumerID(name string) (int, bool) {
	if !strings.HasPrefix(name, "c") {
		return 0, false
	}
	id, err := strconv.Atoi(name[1:])
	return id, err == nil && id >= 0
}
