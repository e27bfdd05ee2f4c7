package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
)

// backlogPhase is a scenario's backlog: producers fill the queue with consumers off until
// fillEnd; then consumers start and the drain is timed until the lag is zero: every message
// intended during the fill has been delivered (to every group, by the ledger) and, where the
// engine reports lag, the engine's backlog reads 0. A message intended before fillEnd is a backlog
// message; its end-to-end latency is kept apart from that of messages intended after the fill
// and received during the drain.
type backlogPhase struct {
	stop    bool          // producers stop at the fill's end (backlog.producers: stop)
	fillEnd time.Duration // since the epoch
	groups  int

	startOnce sync.Once
	start     chan struct{} // closed when consumers may read
	// startedNs and drainedNs are since the epoch (drainedNs 0 until drained).
	startedNs, drainedNs atomic.Int64
	// deliveries counts this run's deliveries (every group, duplicates too) until drained.
	deliveries atomic.Int64
	lagSource  atomic.Value // string

	// sending counts backlog messages inside Send; acked those acknowledged; delivered the first
	// deliveries of backlog messages to each group.
	sending, acked, delivered atomic.Int64

	// backlogE2E and drainE2E are per consumer, guarded by that consumer's recorder lock.
	backlogE2E, drainE2E []*hdrhistogram.Histogram
}

// fillEnd is when the fill ends, since the epoch: backlog.duration, or the moment the schedule
// over all producers has intended backlog.messages messages (the schedules are pure functions of
// time, so this is found by bisection without running them).
func fillEnd(sc *scenarios.Scenario) time.Duration {
	b := sc.Backlog
	if b.Duration > 0 {
		return b.Duration.D()
	}
	pacers := make([]Pacer, sc.Producers)
	for i := range pacers {
		pacers[i] = producerPacer(sc, nil, i)
		pacers[i].Duration = scenarios.MaxDuration
	}
	count := func(t time.Duration) (n int64) {
		for _, p := range pacers {
			n += int64(p.CountBefore(t))
		}
		return n
	}
	lo, hi := time.Duration(0), scenarios.MaxDuration // count(hi) >= N: validation bounds N
	for lo < hi {
		mid := lo + (hi-lo)/2
		if count(mid) >= b.Messages {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func newBacklogPhase(sc *scenarios.Scenario, groups int) *backlogPhase {
	b := &backlogPhase{stop: sc.Backlog.Producers == "stop", fillEnd: fillEnd(sc), groups: max(groups, 1), start: make(chan struct{})}
	for range sc.Consumers {
		b.backlogE2E = append(b.backlogE2E, results.NewHistogram())
		b.drainE2E = append(b.drainE2E, results.NewHistogram())
	}
	return b
}

// scheduleEnd is when producers' schedules end, since the epoch: the duration, after the fill
// when there is one (or at the fill's end when producers stop then).
func scheduleEnd(sc *scenarios.Scenario) time.Duration {
	if !sc.Backlog.Set() {
		return sc.Duration.D()
	}
	f := fillEnd(sc)
	if sc.Backlog.Producers == "stop" {
		return f
	}
	return f + sc.Duration.D()
}

func (b *backlogPhase) isBacklog(intendedNs int64) bool { return intendedNs < int64(b.fillEnd) }

// waitStart blocks a consumer until the fill is over; false when ctx ended first.
func (b *backlogPhase) waitStart(ctx context.Context) bool {
	select {
	case <-b.start:
		return true
	case <-ctx.Done():
		return false
	}
}

// begin starts the consumers and the watch for the end of the drain (once).
func (r *run) beginDrain(ctx context.Context) {
	b := r.backlog
	b.startOnce.Do(func() {
		b.startedNs.Store(r.since())
		close(b.start)
		go r.watchDrain(ctx)
	})
}

// watchDrain polls every few milliseconds until the backlog is drained or ctx ends (consumers
// stopped). The ledger's condition is checked first (cheap); the engine's lag only then.
func (r *run) watchDrain(ctx context.Context) {
	b := r.backlog
	lr, hasLag := r.eng.(engines.LagReporter)
	for ctx.Err() == nil {
		if !sleepCtx(ctx, 5*time.Millisecond) {
			return
		}
		if b.sending.Load() > 0 || b.delivered.Load() < b.acked.Load()*int64(b.groups) {
			continue
		}
		if r.since() < int64(b.fillEnd) {
			continue // keep: backlog messages may still be due
		}
		source := "ledger"
		if hasLag {
			lctx, cancel := context.WithTimeout(ctx, time.Second)
			lag, err := lr.Lag(lctx)
			cancel()
			switch {
			case ctx.Err() != nil:
				return // consumers stopped: the runner's own drain check has the last word
			case err == nil && lag.Backlog > 0:
				continue
			case err == nil:
				source = "engine"
			}
		}
		b.markDrained(r.since(), source)
		return
	}
}

// markDrained records the end of the drain, once: by the watcher, or by the runner when its own
// drain check (the same conditions) ended the run first.
func (b *backlogPhase) markDrained(ns int64, source string) {
	if b.startedNs.Load() == 0 || ns < int64(b.fillEnd) {
		return
	}
	if b.drainedNs.CompareAndSwap(0, ns) {
		b.lagSource.Store(source)
	}
}

// noteSending and noteAnswered count a batch's backlog messages around Send.
func (b *backlogPhase) noteSending(intended []int64) {
	if n := b.countBacklog(intended); n > 0 {
		b.sending.Add(n)
	}
}

func (b *backlogPhase) noteAnswered(intended []int64, errs []error) {
	var n, acked int64
	for i, t := range intended {
		if b.isBacklog(t) {
			n++
			if errs[i] == nil {
				acked++
			}
		}
	}
	// Acked first: the watcher must never see the batch neither sending nor acked.
	b.acked.Add(acked)
	b.sending.Add(-n)
}

func (b *backlogPhase) countBacklog(intended []int64) (n int64) {
	for _, t := range intended {
		if b.isBacklog(t) {
			n++
		}
	}
	return n
}

// record files one delivery's end-to-end latency; the consumer's recorder lock is held.
func (b *backlogPhase) record(consumer int, intendedNs, e2e int64, first bool) {
	if b.drainedNs.Load() == 0 {
		b.deliveries.Add(1)
	}
	switch {
	case b.isBacklog(intendedNs):
		_ = b.backlogE2E[consumer].RecordValue(max(e2e, 0))
		if first {
			b.delivered.Add(1)
		}
	case b.drainedNs.Load() == 0:
		_ = b.drainE2E[consumer].RecordValue(max(e2e, 0))
	}
}

// result is the backlog block of the summary.
func (r *run) backlogResult(consumersStoppedNs int64) *results.Backlog {
	b := r.backlog
	out := &results.Backlog{Producers: r.sc.Backlog.Producers, FilledMessages: b.acked.Load()}
	started := b.startedNs.Load()
	if started == 0 { // the run stopped before the fill ended
		out.FillSeconds = time.Duration(consumersStoppedNs).Seconds()
		return out
	}
	out.FillSeconds = time.Duration(started).Seconds()
	end, deliveries := consumersStoppedNs, b.deliveries.Load()
	if d := b.drainedNs.Load(); d > 0 {
		out.Drained, end = true, d
		out.LagSource, _ = b.lagSource.Load().(string)
	}
	out.DrainSeconds = time.Duration(end - started).Seconds()
	if out.DrainSeconds > 0 {
		out.DrainRate = float64(deliveries) / float64(b.groups) / out.DrainSeconds
		out.NetDrainRate = float64(out.FilledMessages) / out.DrainSeconds
	}
	bh, dh := results.NewHistogram(), results.NewHistogram()
	for i, rec := range r.consumerRecs {
		rec.mu.Lock()
		bh.Merge(b.backlogE2E[i])
		dh.Merge(b.drainE2E[i])
		rec.mu.Unlock()
	}
	out.BacklogE2E, out.DrainE2E = results.Summarise(bh), results.Summarise(dh)
	return out
}
