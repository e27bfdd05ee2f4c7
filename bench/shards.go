package bench

import (
	"context"
	"fmt"
	"time"

	"qbench/engines"
	"qbench/results"
)

// shardLags keeps, per shard, the largest backlog and pending of the per-second lag readings
// (engines that spread the queue over several keys report each shard's part).
type shardLags struct {
	maxBacklog, maxPending []int64
}

func (m *shardLags) note(ls []engines.ShardLag) {
	for len(m.maxBacklog) < len(ls) {
		m.maxBacklog, m.maxPending = append(m.maxBacklog, 0), append(m.maxPending, 0)
	}
	for k, l := range ls {
		m.maxBacklog[k] = max(m.maxBacklog[k], l.Backlog)
		m.maxPending[k] = max(m.maxPending[k], l.Pending)
	}
}

// perShard is the result's per-shard lag: a reading taken now, after the drain (the backlog and
// pending left at the end, and each shard's counts), with the maxima of the run's readings.
// Nothing for an engine with one shard or none.
func (r *run) perShard(m *shardLags) []results.ShardLag {
	lr, ok := r.eng.(engines.LagReporter)
	if sh, isSharded := r.eng.(engines.Sharder); !ok || !isSharded || sh.Shards() <= 1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	lag, err := lr.Lag(ctx)
	if err != nil || len(lag.Shards) == 0 {
		r.opts.Logf("per-shard lag at the end: %v", err)
		return nil
	}
	m.note(lag.Shards)
	out := make([]results.ShardLag, len(lag.Shards))
	for k, l := range lag.Shards {
		out[k] = results.ShardLag{Shard: k, Backlog: l.Backlog, Pending: l.Pending, MaxBacklog: m.maxBacklog[k], MaxPending: m.maxPending[k],
			Sent: l.Sent, Received: l.Received}
	}
	return out
}

// setOrder tells the ledger what order the engine owes this run's consumers, and returns the
// scope for the result, or (scope "") why no order is owed:
//   - per producer: one consumer per receiving group reading one queue;
//   - per producer and shard, or partition: the engine routes each message to one of several
//     keys (Sharder: by a pure function the ledger calls; DeliverySharder: the deliveries name
//     the shard), and messages on different keys owe each other nothing;
//   - nothing: a group of several consumers competing for one queue (each message goes to
//     whichever asks first), unless the engine deals every shard to one member (SoleReader).
func (r *run) setOrder() (scope, notPromised string) {
	word := ""
	switch eng := r.eng.(type) {
	case engines.DeliverySharder:
		r.ledger.SetDeliveryShards()
		word = eng.DeliveryShards()
	case engines.Sharder:
		if eng.Shards() > 1 {
			r.ledger.SetShards(eng.Shards(), eng.ShardOf)
			word = "shard"
		}
	}
	members := map[int]int{}
	most := 0
	for c := range r.sc.Consumers {
		members[r.groupOf(c)]++
		most = max(most, members[r.groupOf(c)])
	}
	if most > 1 {
		if sr, ok := r.eng.(engines.SoleReader); !ok || !sr.SoleReaders() {
			r.ledger.SetNoOrder()
			what := "one queue"
			if word != "" {
				what = "the same " + word
			}
			return "", fmt.Sprintf("%d consumers of one group compete for %s: each message goes to whichever asks first, so no order is promised among them", most, what)
		}
	}
	if word == "" {
		return "per producer", ""
	}
	return "per producer and " + word, ""
}
