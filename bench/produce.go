package bench

import (
	"context"
	"qbench/engines"
	"time"
)

// preciseSleepMax is the longest wait slept on the producer's thread, uninterruptible.
const preciseSleepMax = 5 * time.Millisecond

// produce runs one producer's schedule. Open loop: each message has an intended send time from
// the pacer, and its latency is measured from then, so a stalled engine is charged for every
// message that waited behind the stall. Closed loop (rate: max): the next batch goes as soon as
// the previous one is acknowledged and the intended time is the actual send time.
func (r *run) produce(ctx, stop context.Context, id int, p engines.Producer, rec *recorder, warmupNs int64) {
	sc := r.sc
	bufs := make([][]byte, sc.Batch)
	for i := range bufs {
		bufs[i] = make([]byte, sc.MessageSize)
		fillPattern(bufs[i])
	}
	errs := make([]error, sc.Batch)
	intended := make([]int64, sc.Batch)
	pacer := Pacer{Duration: sc.Duration.D()}
	if !sc.Rate.Max {
		pacer = NewPacer(sc.Rate.PerSecond, id, sc.Producers, sc.Duration.D())
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var seq uint64
	// A producer that has fallen far behind (a dead server, retries) stops at the duration plus
	// the drain timeout: what it had not sent by then is counted unsent, and a send still in
	// flight then is cut off and fails.
	hardStop := r.epoch.Add(sc.Duration.D() + sc.DrainTimeout.D())
	sendCtx, cancel := context.WithDeadline(ctx, hardStop)
	defer cancel()
	defer func() {
		if !sc.Rate.Max && stop.Err() == nil {
			total, _, _ := pacer.Pace(pacer.Duration, 0)
			if total > seq {
				r.unsent.Add(int64(total - seq))
			}
		}
	}()
	for stop.Err() == nil && ctx.Err() == nil && time.Now().Before(hardStop) {
		var n int
		if sc.Rate.Max {
			now := r.since()
			if now >= int64(sc.Duration) {
				return
			}
			n = sc.Batch
			for i := 0; i < n; i++ {
				intended[i] = now
			}
		} else {
			due, wait, done := pacer.Pace(time.Duration(r.since()), seq)
			if done {
				return
			}
			if due == 0 {
				// Short waits sleep precisely on this thread; long ones on an interruptible timer,
				// waking a little early to finish precisely.
				if wait <= preciseSleepMax {
					preciseSleep(wait)
					continue
				}
				timer.Reset(wait - preciseSleepMax/2)
				select {
				case <-timer.C:
				case <-stop.Done():
					return
				}
				continue
			}
			n = int(min(due, uint64(sc.Batch)))
			for i := 0; i < n; i++ {
				intended[i] = int64(pacer.IntendedAt(seq + uint64(i)))
			}
		}
		for i := 0; i < n; i++ {
			Stamp{RunTag: r.tag, Producer: uint32(id), Seq: seq + uint64(i), IntendedNs: intended[i]}.Encode(bufs[i])
			errs[i] = nil
		}
		sentAt := r.since()
		p.Send(sendCtx, bufs[:n], errs[:n])
		ackAt := r.since()
		rec.mu.Lock()
		for i := 0; i < n; i++ {
			measured := intended[i] >= warmupNs
			if errs[i] == nil {
				rec.record(KindProduce, ackAt-intended[i], measured)
			}
			rec.record(KindSendDelay, sentAt-intended[i], measured)
		}
		rec.mu.Unlock()
		var failed int64
		for i := 0; i < n; i++ {
			r.ledger.SentAt(id, seq+uint64(i), errs[i] == nil, intended[i])
			if errs[i] != nil {
				failed++
				r.noteErr("produce", errs[i])
			}
		}
		if failed < int64(n) {
			r.noteRecovery(ackAt, true)
		}
		if failed > 0 {
			ws := r.activeWindows()
			if len(ws) > 0 {
				ws[len(ws)-1].produceErrs.Add(failed)
			}
		}
		r.ackedN.Add(int64(n) - failed)
		r.failedN.Add(failed)
		r.produceErrs.Add(failed)
		seq += uint64(n)
	}
}
