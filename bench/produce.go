package bench

import (
	"context"
	"qbench/engines"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// preciseSleepMax is the longest wait slept on the producer's thread, uninterruptible.
const preciseSleepMax = 5 * time.Millisecond

// batchSlot is one batch in flight, with buffers of its own: a payload handed to Send is never
// restamped while that Send may still be using it.
type batchSlot struct {
	bufs     [][]byte
	errs     []error
	intended []int64
	seq      uint64 // the batch's first sequence number
	n        int
}

func newBatchSlot(batch, size int) *batchSlot {
	s := &batchSlot{bufs: make([][]byte, batch), errs: make([]error, batch), intended: make([]int64, batch)}
	for i := range s.bufs {
		s.bufs[i] = make([]byte, size)
		fillPattern(s.bufs[i])
	}
	return s
}

// produce runs one producer's schedule. Open loop: each message has an intended send time from
// the pacer, and its latency is measured from then, so a stalled engine is charged for every
// message that waited behind the stall. The schedule is kept while earlier batches are in flight,
// up to the scenario's in_flight batches (as k6's arrival-rate executors and Kafka's async
// producers do); when all are in flight, due messages wait for a free slot, late, and the wait is
// counted (inFlightFull). Closed loop (rate: max): each of the in_flight slots sends its next
// batch as soon as its previous one is acknowledged, and the intended time is the dispatch time.
//
// This goroutine paces, stamps and dispatches; in_flight sender goroutines call Send (the
// engines.Producer contract allows that many concurrent calls) and record the outcome.
func (r *run) produce(ctx, stop context.Context, id int, p engines.Producer, rec *recorder, warmupNs int64) {
	sc := r.sc
	inFlight := max(sc.InFlight, 1)
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

	free := make(chan *batchSlot, inFlight)
	for range inFlight {
		free <- newBatchSlot(sc.Batch, sc.MessageSize)
	}
	work := make(chan *batchSlot, inFlight) // never full: there are only inFlight slots
	// next is the next sequence number to dispatch; a sender reads it when its answer arrives,
	// for the ledger's reorder rule. It is stored before the batch is handed over, so a batch
	// whose first number is at or above what a sender read was sent after that answer.
	var next atomic.Uint64
	var senders sync.WaitGroup
	for range inFlight {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for s := range work {
				r.sendBatch(sendCtx, id, p, s, rec, warmupNs, &next)
				free <- s
			}
		}()
	}
	// Every batch dispatched is answered (acknowledged, failed, or cut off at the hard stop)
	// before produce returns, so the runner's accounting sees all of them.
	defer func() {
		close(work)
		senders.Wait()
	}()

	// acquire waits for a free slot; nil when the run ends first.
	acquire := func() *batchSlot {
		select {
		case s := <-free:
			return s
		case <-stop.Done():
		case <-sendCtx.Done():
		}
		return nil
	}
	for stop.Err() == nil && ctx.Err() == nil && time.Now().Before(hardStop) {
		var s *batchSlot
		var n int
		if sc.Rate.Max {
			if s = acquire(); s == nil {
				return
			}
			now := r.since()
			if now >= int64(sc.Duration) {
				return
			}
			n = sc.Batch
			for i := 0; i < n; i++ {
				s.intended[i] = now
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
			select {
			case s = <-free:
			default:
				// Every slot is in flight: the due messages wait, late, and their send delay
				// will say by how much.
				r.inFlightFull.Add(1)
				if s = acquire(); s == nil {
					return
				}
				// More may have fallen due meanwhile; they go together, up to the batch size.
				if due, _, done = pacer.Pace(time.Duration(r.since()), seq); done {
					return
				}
			}
			n = int(min(due, uint64(sc.Batch)))
			for i := 0; i < n; i++ {
				s.intended[i] = int64(pacer.IntendedAt(seq + uint64(i)))
			}
		}
		for i := 0; i < n; i++ {
			Stamp{RunTag: r.tag, Producer: uint32(id), Seq: seq + uint64(i), IntendedNs: s.intended[i]}.Encode(s.bufs[i])
		}
		s.seq, s.n = seq, n
		r.ledger.Batch(id, seq, n)
		seq += uint64(n)
		next.Store(seq)
		work <- s
		// Let the sender run now, on this P, rather than after the nanosleep that usually follows:
		// a sleeping thread keeps its P, and the sender would wait for another P to steal it.
		runtime.Gosched()
	}
}

// sendBatch sends one dispatched batch and accounts for its answer. send_delay is measured here,
// just before Send, so a batch that waited for a sender goroutine is charged that wait too.
func (r *run) sendBatch(ctx context.Context, id int, p engines.Producer, s *batchSlot, rec *recorder, warmupNs int64, next *atomic.Uint64) {
	n := s.n
	errs, intended := s.errs[:n], s.intended[:n]
	clear(errs)
	sentAt := r.since()
	p.Send(ctx, s.bufs[:n], errs)
	ackAt := r.since()
	// First, so that the reorder rule knows the answer before most deliveries race it.
	r.ledger.SentBatch(id, s.seq, errs, intended, next.Load())
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
}
