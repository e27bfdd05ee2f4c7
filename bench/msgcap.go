package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"qbench/bench/ledger"
	"qbench/results"
	"qbench/scenarios"
)

// The ledger must fit the memory budget whatever the engine does. A run's compact ledger keeps
// what is unresolved: validation bounds the backlog it can foresee (scenarios.BacklogBound), and
// a backlog that outgrows it anyway (consumers that cannot keep up, rate: max faster than they
// read) stops the producers once the ledger's bytes reach the budget. A segment's reference
// ledger keeps every message: a rate: max segment, with no schedule to bound what it sends, stops
// at the budget's message count (scenarios.MessageCap). Either way the run drains as usual, and
// the summary says so in a warning.

// capPoll is how often the cap is checked: at a few million messages a second, the overshoot is
// a few thousand messages, far inside the budget's share left for growth.
const capPoll = 2 * time.Millisecond

// pacedPoll is how often a paced run's ledger is checked against the budget: its backlog grows
// at most at the scenario's rate, so a coarser poll overshoots by little and wakes less.
const pacedPoll = 20 * time.Millisecond

type messageCap struct {
	limit int64
	hit   atomic.Int64 // messages answered when the cap stopped the producers; 0 if it did not
	// held is how many messages the compact ledger kept one by one when the budget stopped the
	// producers, dense the bytes of its backlog's dense form.
	held, dense atomic.Int64
}

// produceStop is the context the producers stop on: stop, and the memory budget's bound. The run
// itself is not interrupted by the cap (stop stays as it is).
func (r *run) produceStop(stop context.Context) (context.Context, func()) {
	if !r.sc.Produces() {
		return stop, func() {}
	}
	var over func() bool
	c, compact := r.ledger.(*ledger.Compact)
	budget := r.sc.LedgerBudget()
	per := scenarios.UnresolvedBytesPerMessage(r.groups)
	switch {
	case compact && budget > 0:
		over = func() bool {
			n, held, dense := r.ledger.Acked()+r.produceErrs.Load(), c.Kept(), c.DenseBytes()
			if float64(held*per+dense)+float64(n)*scenarios.SettledBytesPerMessage < float64(budget) {
				return false
			}
			r.msgCap.hit.Store(n)
			r.msgCap.held.Store(held)
			r.msgCap.dense.Store(dense)
			return true
		}
	case r.sc.Rate.Max && r.msgCap.limit > 0:
		over = func() bool {
			n := r.ledger.Acked() + r.produceErrs.Load()
			if n < r.msgCap.limit {
				return false
			}
			r.msgCap.hit.Store(n)
			return true
		}
	default:
		return stop, func() {}
	}
	ctx, cancel := context.WithCancel(stop)
	go func() {
		poll := capPoll
		if !r.sc.Rate.Max {
			poll = pacedPoll
		}
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if over() {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// capWarning adds the cap's warning to the result when it stopped the producers.
func (r *run) capWarning(res *results.Result) {
	if res == nil || r.msgCap.hit.Load() == 0 {
		return
	}
	if held := r.msgCap.held.Load(); held > 0 {
		res.Summary.Warnings = append(res.Summary.Warnings, fmt.Sprintf(
			"producing stopped at the memory budget after %d messages: the ledger held %d unresolved (not yet delivered to every group: a backlog the consumers did not keep up with, or messages lost, failed or duplicated) at %d bytes each, and %s of a backlog in its dense form (--memory-budget or $%s raises the budget): the run is shorter than its duration",
			r.msgCap.hit.Load(), held, scenarios.UnresolvedBytesPerMessage(r.groups), scenarios.FormatBytes(r.msgCap.dense.Load()), scenarios.MemoryBudgetEnv))
		return
	}
	res.Summary.Warnings = append(res.Summary.Warnings, fmt.Sprintf(
		"rate: max stopped producing at its message cap, %d messages (the memory budget over %d ledger bytes per message; --memory-budget or $%s raises it): the run is shorter than its duration",
		r.msgCap.limit, scenarios.LedgerBytesPerMessage(r.groups), scenarios.MemoryBudgetEnv))
}
