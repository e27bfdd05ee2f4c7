package bench

import (
	"context"
	"math/rand/v2"
	"qbench/engines"
	"qbench/scenarios"
	"time"
)

// consume receives until ctx ends: it records end-to-end latency from the intended send time,
// marks each delivery in the ledger, does the scenario's work, and acknowledges. Consumer faults
// arrive on the consumer's control channel. It closes its consumer when it returns.
func (r *run) consume(ctx context.Context, id int, c engines.Consumer, group int, rec *recorder, warmupNs int64) {
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	var crash *scenarios.Fault
	// A slow-consumer fault: each message's work is drawn from slow until slowUntil.
	var slow *scenarios.WorkDist
	var slowUntil time.Time
	rng := rand.New(rand.NewPCG(uint64(r.sc.Seed), uint64(id)))
	consumeOnly := !r.sc.Produces()
	for ctx.Err() == nil {
		select {
		case f := <-r.consumerFaults[id]:
			switch f.Kind {
			case scenarios.FaultConsumerPause:
				if !sleepCtx(ctx, f.Duration.D()) {
					return
				}
			case scenarios.FaultSubscriberOffline:
				c.Close()
				c = nil
				if !sleepCtx(ctx, f.Duration.D()) {
					return
				}
				if c = r.reopen(ctx, id); c == nil {
					return
				}
			case scenarios.FaultConsumerCrash:
				crash = &f
			case scenarios.FaultSlowConsumer:
				slow, slowUntil = f.Work, time.Now().Add(f.Duration.D())
			}
			continue
		default:
		}
		ds, err := c.Receive(ctx)
		if consumerOSYield() {
			osYield() // osyield_linux.go
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.consumeErrs.Add(1)
			r.noteErr("consume", err)
			// An engine that fails at once must not spin the CPU.
			if !sleepCtx(ctx, 10*time.Millisecond) {
				return
			}
			continue
		}
		if len(ds) == 0 {
			continue
		}
		if crash != nil && crash.Point == "before-work" {
			// The consumer dies holding messages it has not processed: they are not delivered.
			if c = r.crashConsumer(ctx, id, c, crash); c == nil {
				return
			}
			crash = nil
			continue
		}
		at := r.since()
		toAck := ds
		poison := uint64(r.sc.PoisonEvery)
		if poison > 0 {
			toAck = make([]engines.Delivery, 0, len(ds))
		}
		rec.mu.Lock()
		var bytes int64
		for _, d := range ds {
			bytes += int64(len(d.Payload))
			st, err := DecodeStamp(d.Payload)
			if err != nil || st.RunTag != r.tag {
				r.foreign.Add(1)
				r.ledger.Foreign()
				continue
			}
			// A consume-only run reads messages stamped on another process's clock: their
			// intended times mean nothing here, so no end-to-end latency is recorded; unless the
			// run is a segment (--segment, --start-at), whose stamps are on the shared clock.
			if consumeOnly && r.seg == nil {
				r.consumerCounts[id].note(r.ledger.DeliveredOn(group, d.Shard, int(st.Producer), st.Seq), r.ledger.Poison(st.Seq))
				continue
			}
			// The stamp's time is on the run's shared clock (segment.go): the warm-up is judged
			// there, the latency on this process's clock.
			intended := st.IntendedNs - r.stampShift()
			e2e := at - intended
			rec.recordAt(KindE2E, intended, at, st.IntendedNs >= warmupNs)
			first := r.ledger.DeliveredAt(group, d.Shard, int(st.Producer), st.Seq, intended)
			r.consumerCounts[id].note(first, r.ledger.Poison(st.Seq))
			if r.backlog != nil {
				r.backlog.record(id, st.IntendedNs, e2e, first)
			}
			if poison > 0 && st.Seq%poison != 0 {
				toAck = append(toAck, d)
			}
		}
		rec.mu.Unlock()
		r.noteRecovery(at, false)
		r.deliveredN.Add(int64(len(ds)))
		r.deliveredBytes.Add(bytes)
		work := r.sc.Work.D() * time.Duration(len(ds))
		if slow != nil && time.Now().Before(slowUntil) {
			for range ds {
				work += slow.Sample(rng)
			}
		}
		if work > 0 {
			// The work ends with the run's hard stop (Ctrl-C), not with the drain: a consumer
			// stopped at the drain timeout still finishes and acknowledges what it holds.
			sleepCtx(r.hard, work)
		}
		if crash != nil {
			// The work is done, the acknowledgement never sent.
			if c = r.crashConsumer(ctx, id, c, crash); c == nil {
				return
			}
			crash = nil
			continue
		}
		if err := c.Ack(context.WithoutCancel(ctx), toAck); err != nil {
			r.consumeErrs.Add(1)
			r.noteErr("ack", err)
		}
	}
}

// crashConsumer abandons c without acknowledging what it holds and, if the fault says so, opens
// the consumer again under the same id after a delay. It returns nil when the consumer stays down.
func (r *run) crashConsumer(ctx context.Context, id int, c engines.Consumer, f *scenarios.Fault) engines.Consumer {
	w := r.consumerCrashWindow(id)
	if w != nil {
		// The batch it dies holding was read after the fault fired: messages intended up to
		// now are the crash's to answer for (their loss or redelivery).
		w.heldUntil.Store(r.since())
	}
	c.Close()
	if f.RestartAfter <= 0 || !sleepCtx(ctx, f.RestartAfter.D()) {
		return nil // never came back: the window stays open
	}
	c = r.reopen(ctx, id)
	if w != nil && c != nil {
		// The consumer is back: the window ends now, and recovery counts from here.
		w.endNs.Store(r.since())
		w.firstRead.Store(0)
		w.firstWrite.Store(0)
	}
	return c
}

// consumerCrashWindow is the newest consumer-crash window of consumer id.
func (r *run) consumerCrashWindow(id int) *faultWindow {
	ws := r.activeWindows()
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].fault.Kind == scenarios.FaultConsumerCrash && ws[i].fault.Consumer == id {
			return ws[i]
		}
	}
	return nil
}

// reopen opens consumer id again, retrying until ctx ends.
func (r *run) reopen(ctx context.Context, id int) engines.Consumer {
	for ctx.Err() == nil {
		c, err := r.eng.NewConsumer(ctx, id)
		if err == nil {
			return c
		}
		r.noteErr("consume", err)
		sleepCtx(ctx, 100*time.Millisecond)
	}
	return nil
}

// sleepCtx sleeps d unless ctx ends first; it reports whether it slept the whole time.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
