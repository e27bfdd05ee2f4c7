package bench

import (
	"sync/atomic"

	"qbench/results"
)

// consumerCount is one consumer's share: its deliveries of this run's messages and how many of
// them its group had already received (redeliveries of the scenario's poison messages, which
// the run asked for, apart: poison).
type consumerCount struct {
	deliveries, duplicates, poison atomic.Int64
}

func (c *consumerCount) note(first, poison bool) {
	c.deliveries.Add(1)
	switch {
	case first:
	case poison:
		c.poison.Add(1)
	default:
		c.duplicates.Add(1)
	}
}

// perConsumer is each consumer's deliveries, duplicates and end-to-end latency (measured window),
// so a slow consumer's smaller share, or a subscriber that missed messages, shows in the summary.
// Nil for a run with one consumer (the run's figures are its own) or none.
func (r *run) perConsumer() []results.ConsumerShare {
	if len(r.consumerCounts) < 2 || !r.sc.Consumes() {
		return nil
	}
	members := map[int]int{}
	for i := range r.consumerCounts {
		members[r.groupOf(i)]++
	}
	out := make([]results.ConsumerShare, 0, len(r.consumerCounts))
	for i := range r.consumerCounts {
		if !r.localConsumer(i) {
			continue
		}
		c := results.ConsumerShare{Consumer: i, Group: r.groupOf(i),
			Deliveries: r.consumerCounts[i].deliveries.Load(), Duplicates: r.consumerCounts[i].duplicates.Load()}
		if members[c.Group] == 1 && r.sc.Produces() && r.seg == nil {
			// Alone in its group (a pub/sub subscriber): what it did not receive, it missed.
			c.Missed = max(0, r.ledger.Acked()-(c.Deliveries-c.Duplicates-r.consumerCounts[i].poison.Load()))
		}
		if i < len(r.pendingEnd) {
			p := r.pendingEnd[i]
			c.Pending = &p
		}
		rec := r.consumerRecs[i]
		rec.mu.Lock()
		c.E2E = results.Summarise(rec.measured[KindE2E])
		rec.mu.Unlock()
		out = append(out, c)
	}
	return out
}
