package bench

import (
	"context"
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
	"sync"
	"sync/atomic"
	"time"
)

// preciseSleepMax is the longest wait slept on the producer's thread, uninterruptible.
const preciseSleepMax = 5 * time.Millisecond

// batchSlot is one batch in flight, with buffers of its own: a payload handed to Send is never
// restamped while that Send may still be using it.
type batchSlot struct {
	// full are the buffers, each sized for the largest message; bufs are them cut to the
	// claimed messages' sizes.
	full     [][]byte
	bufs     [][]byte
	errs     []error
	intended []int64
	seq      uint64 // the batch's first sequence number
	n        int
	// held says the batch fell due while every in-flight slot awaited the engine's answer: any
	// lateness of its sends is the engine's, not the generator's.
	held bool
}

func newBatchSlot(batch, size int, content scenarios.Payload, seed int64, key uint64) *batchSlot {
	s := &batchSlot{full: make([][]byte, batch), bufs: make([][]byte, batch), errs: make([]error, batch), intended: make([]int64, batch)}
	for i := range s.bufs {
		s.full[i] = make([]byte, size)
		fillContent(s.full[i], content, seed, key*uint64(batch)+uint64(i))
		s.bufs[i] = s.full[i]
	}
	return s
}

// produce runs one producer's schedule. Open loop: each message has an intended send time from
// the pacer, and its latency is measured from then, so a stalled engine is charged for every
// message that waited behind the stall. The schedule is kept while earlier batches are in flight,
// up to the scenario's in_flight batches (as k6's arrival-rate executors and Kafka's async
// producers do); when all are in flight, due messages wait until one is answered, late, and the
// wait is counted (inFlightFull). Closed loop (rate: max): each of the in_flight slots sends its
// next batch as soon as its previous one is acknowledged, and the intended time is the claim time.
//
// in_flight goroutines share the schedule, leader and followers: the one holding the pacing lock
// sleeps until the next batch is due, claims and stamps it into its own buffers, hands the lock on
// and sends the batch itself, so no goroutine switch lies between due time and Send; the next
// one free takes over the schedule meanwhile (the engines.Producer contract allows that many
// concurrent Sends). When every goroutine is in Send, nobody paces: that is the limit. When the
// next batch is due well after the answer should be back, the claimer keeps the lock through its
// Send instead (see holdSlack), and a timer passes it on at the next due time if the answer is late.
func (r *run) produce(ctx, stop context.Context, id int, p engines.Producer, rec *recorder, warmupNs int64) {
	sc := r.sc
	inFlight := max(sc.InFlight, 1)
	pc := &pacing{mu: newTokenLock(), pacer: Pacer{Duration: r.scheduleEnd}, timer: time.NewTimer(time.Hour), inFlight: int64(inFlight), stats: r.pacerStats[id]}
	pc.sendNs.Store(int64(time.Millisecond)) // until measured, assume a slow engine: pass the schedule on
	if !sc.Rate.Max {
		pc.pacer = producerPacer(sc, ShapeFor(sc), id)
		pc.pacer.Duration = r.scheduleEnd // a backlog's fill comes before the duration
	}
	defer pc.timer.Stop()
	pc.handoff = newHandoff(pc.mu.Unlock)
	defer pc.handoff.close()
	// A producer that has fallen far behind (a dead server, retries) stops at the duration plus
	// the drain timeout: what it had not sent by then is counted unsent, and a send still in
	// flight then is cut off and fails.
	hardStop := r.epoch.Add(r.scheduleEnd + sc.DrainTimeout.D())
	sendCtx, cancel := context.WithDeadline(ctx, hardStop)
	defer cancel()
	var wg sync.WaitGroup
	for slot := range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newBatchSlot(sc.Batch, r.sizer.Largest(), sc.Payload, sc.Seed, uint64(id)*uint64(inFlight)+uint64(slot))
			held := false // this goroutine still holds the pacing lock from its last claim
			for {
				if !held {
					pc.mu.Lock()
				}
				hold, ok := r.claim(ctx, stop, sendCtx, hardStop, id, pc, s)
				if !ok {
					return
				}
				began := r.since()
				if hold {
					// The next batch is due well after this one's answer should be back:
					// keep the schedule (no goroutine to wake, none to switch to) unless the
					// answer is late, when the handoff passes the schedule on.
					pc.handoff.arm(time.Duration(pc.nextDue - began))
					r.sendBatch(sendCtx, id, p, s, rec, warmupNs, &pc.next)
					held = pc.handoff.disarm()
				} else {
					r.sendBatch(sendCtx, id, p, s, rec, warmupNs, &pc.next)
					held = false
				}
				pc.noteSend(r.since() - began)
				pc.busy.Add(-1)
			}
		}()
	}
	// Every batch claimed is answered (acknowledged, failed, or cut off at the hard stop) before
	// produce returns, so the runner's accounting sees all of them.
	wg.Wait()
	if !sc.Rate.Max && stop.Err() == nil {
		total, _, _ := pc.pacer.Pace(pc.pacer.Duration, 0)
		if total > pc.seq {
			r.unsent.Add(int64(total - pc.seq))
		}
	}
}

// tokenLock is a lock made of a one-slot channel, for the pacing lock. A sync.Mutex held across
// the pacer's sleeps has waiters that wait over a millisecond, which puts it in starvation mode:
// each Unlock then hands the lock to the waiter and yields the unlocking goroutine's P to it, so
// the claimer that has just stamped a batch waits in the run queue before its Send (a runtime
// trace of the 10k scenario at load 19: 350 ms of scheduling delay in 2 s, all at claim's Unlock,
// counted as send delay). Releasing a channel slot readies the waiter without yielding: the
// claimer sends first, and the waiter runs when the Send blocks. Unlock may be called by another
// goroutine than Lock's (the handoff does).
type tokenLock struct{ ch chan struct{} }

func newTokenLock() tokenLock { return tokenLock{ch: make(chan struct{}, 1)} }

func (l tokenLock) Lock()   { l.ch <- struct{}{} }
func (l tokenLock) Unlock() { <-l.ch }

// pacing is one producer's schedule, shared by its in_flight goroutines.
type pacing struct {
	// mu is held by the goroutine pacing the next batch, sleeps included; the fields below it
	// are guarded by it.
	mu    tokenLock
	pacer Pacer
	timer *time.Timer
	seq   uint64 // the next sequence number to claim
	done  bool   // the schedule is over (or the run stopped): nobody claims any more
	// full says the last claim left every goroutine in Send: nobody paced until one came back.
	full     bool
	inFlight int64
	// busy is the number of goroutines between claim and the end of their Send.
	busy atomic.Int64
	// next mirrors seq for senders reading it when their answer arrives (the ledger's reorder
	// rule); it is stored before the claimer sends, so a batch whose first number is at or above
	// what a sender read was sent after that answer.
	next atomic.Uint64
	// nextDue is when the message after the last claim is due (ns since the epoch), for the
	// claimer that keeps the lock; guarded by mu.
	nextDue int64
	// sendNs is a moving average of how long a Send takes, to judge whether the next batch is
	// due before the current one's answer is back.
	sendNs atomic.Int64
	// handoff passes the schedule on when a goroutine keeping it through its Send is late.
	handoff *handoff
	// stats records the pacer's sleeps (pacerstat.go); written by the lock holder, which sleeps.
	stats *pacerStats
}

// holdSlack is how much earlier than the next due time a Send's answer must be expected for its
// goroutine to keep the schedule through the Send: then no other goroutine needs waking (a
// futex wake and a switch, tens of microseconds on a virtual machine, which would otherwise lie
// between due time and Send at low rates).
const holdSlack = 100 * time.Microsecond

// coalesceSleep is the shortest sleep a producer takes while batches are in flight when the
// schedule is denser than that: at 200,000 msg/s over 4 producers (a message every 20 us each)
// the producer otherwise slept before nearly every LPUSH, about 5 messages each (woken late), and
// arming the timerfd alone was a fifth of qbench's CPU (timerfd_settime on this VM), each sleep
// also costing a wake, a handoff and a write and a read. It is an eighth of the 2 ms send-delay
// target of issue 16: the first message of a batch waits at most this much for the others.
const coalesceSleep = 250 * time.Microsecond

// coalesceMin is how many messages must fall due within coalesceSleep for a producer to
// coalesce: the sleep's cost is then shared by at least that many.
const coalesceMin = 4

// coalesces says the producer should sleep coalesceSleep before the next claim, instead of
// waiting for the next message: batches are in flight (not the latency floor, where nothing else
// waits on a sleep), a batch may hold coalesceMin messages, and that many fall due within
// coalesceSleep. What falls due meanwhile then goes as one batch. A sparser schedule (one
// producer at 10,000 msg/s: a message every 100 us, 2 or 3 within coalesceSleep) is paced
// message by message as before, its send delay untouched.
func (pc *pacing) coalesces(wait, now time.Duration, batch int) bool {
	if wait >= coalesceSleep || batch < coalesceMin || pc.busy.Load() == 0 {
		return false
	}
	return pc.pacer.IntendedAt(pc.seq+coalesceMin-1)-now <= coalesceSleep
}

func (pc *pacing) noteSend(d int64) {
	old := pc.sendNs.Load()
	pc.sendNs.Store(old + (d-old)/8)
}

// claim, called with the pacing lock held, waits until a batch is due, stamps it into s and
// records it in the ledger. ok is false when the schedule is over or the run stops. hold says the
// caller keeps the lock through its Send (the next batch is due well after the answer should be
// back); otherwise claim has released it for the next free goroutine.
func (r *run) claim(ctx, stop, sendCtx context.Context, hardStop time.Time, id int, pc *pacing, s *batchSlot) (hold, ok bool) {
	sc := r.sc
	wasFull := pc.full
	pc.full = false
	for !pc.done {
		if stop.Err() != nil || ctx.Err() != nil || sendCtx.Err() != nil || !time.Now().Before(hardStop) {
			break
		}
		var n int
		if sc.Rate.Max {
			now := r.since()
			if now >= int64(r.scheduleEnd) {
				break
			}
			n = sc.Batch
			for i := 0; i < n; i++ {
				s.intended[i] = now
			}
			s.held = false
		} else {
			due, wait, done := pc.pacer.Pace(time.Duration(r.since()), pc.seq)
			if done {
				break
			}
			if due == 0 {
				wasFull = false // on time: nothing waited for the limit
				if pc.coalesces(wait, time.Duration(r.since()), sc.Batch) {
					coarseSleep(coalesceSleep, pc.stats)
					continue
				}
				// Short waits sleep precisely on this thread; long ones on an interruptible timer,
				// waking a little early to finish precisely.
				if wait <= preciseSleepMax {
					// Yield while batches are in flight: their answers need a P. With none
					// (the latency floor), spin without waking an idle thread, unless the
					// engine runs in this process: its server goroutines need the P then
					// (the quickstart's CPU per message rose by a quarter without yielding).
					preciseSleepYield(wait, pc.busy.Load() > 0 || r.engineInProcess, pc.stats)
					continue
				}
				pc.timer.Reset(wait - preciseSleepMax/2)
				select {
				case <-pc.timer.C:
				case <-stop.Done():
				}
				continue
			}
			if wasFull {
				// Every slot was in flight when these fell due: they waited, late, and their
				// send delay will say by how much.
				r.inFlightFull.Add(1)
			}
			n = int(min(due, uint64(sc.Batch)))
			for i := 0; i < n; i++ {
				s.intended[i] = int64(pc.pacer.IntendedAt(pc.seq + uint64(i)))
			}
			s.held = wasFull
		}
		seq, shift := pc.seq, r.stampShift()
		for i := 0; i < n; i++ {
			s.bufs[i] = s.full[i][:r.sizer.Size(uint32(id), seq+uint64(i))]
			Stamp{RunTag: r.tag, Producer: uint32(id), Seq: seq + uint64(i), IntendedNs: s.intended[i] + shift}.Encode(s.bufs[i])
		}
		s.seq, s.n = seq, n
		r.ledger.Batch(id, seq, n)
		pc.seq += uint64(n)
		pc.next.Store(pc.seq)
		if pc.busy.Add(1) == pc.inFlight {
			pc.full = true
		}
		if !sc.Rate.Max && pc.busy.Load() < pc.inFlight {
			pc.nextDue = int64(pc.pacer.IntendedAt(pc.seq))
			if now := r.since(); pc.nextDue-now > 2*pc.sendNs.Load()+int64(holdSlack) {
				return true, true
			}
		}
		pc.mu.Unlock()
		return false, true
	}
	pc.done = true
	pc.mu.Unlock()
	return false, false
}

// sendBatch sends one claimed batch and accounts for its answer. send_delay is measured just
// before Send.
func (r *run) sendBatch(ctx context.Context, id int, p engines.Producer, s *batchSlot, rec *recorder, warmupNs int64, next *atomic.Uint64) {
	n := s.n
	errs, intended := s.errs[:n], s.intended[:n]
	clear(errs)
	if r.backlog != nil {
		r.backlog.noteSending(intended)
	}
	r.live.noteSending(n)
	sentAt := r.since()
	p.Send(ctx, s.bufs[:n], errs)
	ackAt := r.since()
	// First, so that the reorder rule knows the answer before most deliveries race it.
	r.ledger.SentBatch(id, s.seq, errs, intended, next.Load())
	if r.backlog != nil {
		r.backlog.noteAnswered(intended, errs)
	}
	var late int64
	rec.mu.Lock()
	for i := 0; i < n; i++ {
		measured := intended[i] >= warmupNs
		if errs[i] == nil {
			rec.recordAt(KindProduce, intended[i], ackAt, measured)
		}
		rec.record(KindSendDelay, sentAt-intended[i], measured)
		if measured && sentAt-intended[i] >= results.WarnSendDelayMinNs {
			late++
		}
	}
	rec.mu.Unlock()
	if late > 0 {
		// Whose lateness: a batch that fell due while every slot awaited the engine was held
		// by the engine; any other was late for the generator's own reasons (CPU, timers).
		if s.held {
			r.lateHeld.Add(late)
		} else {
			r.lateOwn.Add(late)
		}
	}
	var failed, bytes, measuredBytes int64
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			failed++
			r.noteErr("produce", errs[i])
			continue
		}
		bytes += int64(len(s.bufs[i]))
		if intended[i] >= warmupNs {
			measuredBytes += int64(len(s.bufs[i]))
		}
	}
	r.ackedBytes.Add(bytes)
	r.measuredAckedBytes.Add(measuredBytes)
	if failed < int64(n) {
		r.noteRecovery(ackAt, true)
	}
	if failed > 0 {
		r.noteProduceFailures(intended, errs)
		if r.seg != nil { // when, for the merge to charge the failures to every segment's windows
			r.reference().FailedAt(id, s.seq, errs, ackAt)
		}
	}
	r.ackedN.Add(int64(n) - failed)
	r.failedN.Add(failed)
	r.produceErrs.Add(failed)
}
