package bench

import (
	"context"
	"errors"
	"time"

	"qbench/engines"
	"qbench/results"
)

// sweepTimeout bounds the final sweep: a backlog of millions takes seconds to read, and a server
// that no longer answers must not hold the result back.
const sweepTimeout = 30 * time.Second

// sweepRemainder asks an engine that stores messages (engines.Sweeper) for everything it still
// holds, once consumers have stopped, and marks each message of this run found for its group in
// the ledger: an acknowledged message never delivered is then queued (a backlog) rather than lost
// (gone). The sweep records no latency: it is not a delivery. It returns how long the sweep took,
// 0 when the engine has nothing to sweep. A sweep that fails part way keeps what it found; the
// rest counts as lost, the error is reported with the run's errors, and the result is flagged
// sweep-failed (results.Assess): lost is then at most that, as the engine may still hold some.
func (r *run) sweepRemainder(ctx context.Context) (seconds float64) {
	sw, ok := r.eng.(engines.Sweeper)
	if !ok {
		return 0
	}
	sctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	start := time.Now()
	r.pendingEnd = r.pendingAtEnd(sctx)
	err := sw.Sweep(sctx, func(group int, payload []byte) {
		st, err := DecodeStamp(payload)
		if err != nil || st.RunTag != r.tag {
			return // another run's message, or not ours at all
		}
		r.ledger.Found(group, int(st.Producer), st.Seq)
	})
	if errors.Is(err, engines.ErrNothingStored) {
		return 0
	}
	if err != nil {
		r.noteErr(results.ErrorWhereSweep, err)
		r.opts.Logf("final sweep of what the engine still holds: %v (lost counts the messages it did not read, and the result is flagged %s)", err, results.CodeSweepFailed)
	}
	return time.Since(start).Seconds()
}
