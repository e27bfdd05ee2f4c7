package bench

import (
	"context"
	"errors"

	"qbench/engines"
	"qbench/results"
)

// Per-group lag and per-consumer pending at the end: the figures that show a second group
// falling behind, or a consumer sitting on unacknowledged messages, beside the run's totals.

// groupLags is each receiving group's lag as the load generator sees it: acknowledged messages
// minus the group's first deliveries (the sum of its consumers' deliveries less their
// duplicates, which is the ledger's count for the group). Unlike the run's lag (clampLag), it is
// not cut after a destructive fault: the engine reports one lag summed over groups, so it cannot
// say which group's messages are gone, and cutting every group by the run's gone would read 0
// for a pub/sub subscriber that missed a window (pub/sub holds nothing, so all it missed is
// gone). A group's lag is therefore what it has not received, gone included: at the end, its
// queued plus lost. Nil with one group, in a half run (nothing to compare) or a segment (its
// consumers are only part of each group).
func (s *sampler) groupLags() []int64 {
	r := s.r
	if r.groups < 2 || !(r.sc.Produces() && r.sc.Consumes()) || r.seg != nil {
		return nil
	}
	got := make([]int64, r.groups)
	for i := range r.consumerCounts {
		c := &r.consumerCounts[i]
		if g := r.groupOf(i); g >= 0 && g < r.groups {
			got[g] += c.deliveries.Load() - c.duplicates.Load()
		}
	}
	acked := r.ledger.Acked()
	out := make([]int64, r.groups)
	for g := range out {
		out[g] = max(0, acked-got[g])
	}
	return out
}

// perGroup is each group's consumers, distinct deliveries, lag peak and lag at the end (read
// now, once consumers have stopped: what the group never received), for the summary; nil with
// one group.
func (r *run) perGroup(s *sampler) []results.GroupLag {
	peak, _ := results.GroupLagPeaks(s.series, s.lagSamples)
	last := s.groupLags()
	if len(peak) < 2 || len(last) != len(peak) {
		return nil
	}
	out := make([]results.GroupLag, len(peak))
	for g := range out {
		out[g].Group = g
		out[g].LagMax = max(peak[g], last[g])
		out[g].LagEnd = last[g]
	}
	for i := range r.consumerCounts {
		if g := r.groupOf(i); g >= 0 && g < len(out) {
			out[g].Consumers++
			out[g].Delivered += r.consumerCounts[i].deliveries.Load() - r.consumerCounts[i].duplicates.Load()
		}
	}
	return out
}

// pendingAtEnd asks the engine, once consumers have stopped, how many deliveries each consumer
// still holds unacknowledged (engines.PendingReporter). Nil when the engine keeps no such record
// or did not answer (the error goes with the run's errors).
func (r *run) pendingAtEnd(ctx context.Context) []int64 {
	pr, ok := r.eng.(engines.PendingReporter)
	if !ok || !r.sc.Consumes() {
		return nil
	}
	counts, err := pr.PendingByConsumer(ctx, r.sc.Consumers)
	if errors.Is(err, engines.ErrNothingStored) {
		return nil
	}
	if err != nil {
		r.noteErr("pending", err)
		return nil
	}
	return counts
}
