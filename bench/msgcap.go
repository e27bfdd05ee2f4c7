package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"qbench/results"
	"qbench/scenarios"
)

// A rate: max run has no schedule to bound what it sends, and the ledger keeps every message
// until the run ends: without a cap a fast engine fills the machine's memory. The cap comes from
// the same memory budget that bounds rate x duration at validation (scenarios.MessageCap); the
// producers stop at it, the run drains as usual, and the summary says so in a warning.

// capPoll is how often the cap is checked: at a few million messages a second, the overshoot is
// a few thousand messages, far inside the budget's share left for growth.
const capPoll = 2 * time.Millisecond

type messageCap struct {
	limit int64
	hit   atomic.Int64 // messages answered when the cap stopped the producers; 0 if it did not
}

// produceStop is the context the producers stop on: stop, and for rate: max the message cap.
// The run itself is not interrupted by the cap (stop stays as it is).
func (r *run) produceStop(stop context.Context) (context.Context, func()) {
	if !r.sc.Rate.Max || !r.sc.Produces() || r.msgCap.limit <= 0 {
		return stop, func() {}
	}
	ctx, cancel := context.WithCancel(stop)
	go func() {
		t := time.NewTicker(capPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if n := r.ledger.Acked() + r.produceErrs.Load(); n >= r.msgCap.limit {
					r.msgCap.hit.Store(n)
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
	res.Summary.Warnings = append(res.Summary.Warnings, fmt.Sprintf(
		"rate: max stopped producing at its message cap, %d messages (the memory budget over %d ledger bytes per message; --memory-budget or $%s raises it): the run is shorter than its duration",
		r.msgCap.limit, scenarios.LedgerBytesPerMessage(r.groups), scenarios.MemoryBudgetEnv))
}
