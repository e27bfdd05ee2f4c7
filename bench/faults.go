package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"qbench/bench/ledger"
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

type faultWindow struct {
	fault   scenarios.Fault
	startNs int64
	// endNs is when the fault ended: its start plus its duration, or, for a crash, when the
	// server answered again (unknown, so the largest int64, until then).
	endNs      atomic.Int64
	err        error
	firstWrite atomic.Int64 // ns since epoch of the first ack after endNs; 0 = none yet
	firstRead  atomic.Int64
	// failedMu guards failedIntended: the intended times of sends that failed while this was
	// the latest window begun (chargeProduceErrors charges them by the loss rule).
	failedMu       sync.Mutex
	failedIntended []int64
	target         string // what the fault hit when the engine chose it ("broker 2"); set before endNs
	// heldUntil is when a crashed consumer died (consumer-crash): it held messages intended up
	// to then, so losses and duplicates are charged to the window until then at least.
	heldUntil atomic.Int64
	// instant marks a fault that was one moment (a command that started no background work).
	instant atomic.Bool
	// marked: something other than qbench injected the fault and marked it (marks.go);
	// markDestructive is then its kind's destructiveness (MarkKinds).
	marked, markDestructive bool
}

// destructive reports whether the window's fault can destroy messages (ledger.Window).
func (w *faultWindow) destructive() bool {
	if w.marked {
		return w.markDestructive
	}
	return w.fault.Destructive()
}

// activeWindows returns the windows fired so far.
func (r *run) activeWindows() []*faultWindow {
	r.windowsMu.Lock()
	defer r.windowsMu.Unlock()
	return r.windows
}

// noteRecovery records a successful write or read at ns for every ended fault still waiting for
// its first one.
func (r *run) noteRecovery(ns int64, write bool) {
	for _, w := range r.activeWindows() {
		if ns < w.endNs.Load() {
			continue
		}
		first := &w.firstRead
		if write {
			first = &w.firstWrite
		}
		if first.Load() == 0 {
			first.CompareAndSwap(0, ns)
		}
	}
}

// noteProduceFailures keeps the intended time of each failed send of a batch under the latest
// window begun, for chargeProduceErrors; before any fault began, a failure is charged to none.
func (r *run) noteProduceFailures(intended []int64, errs []error) {
	ws := r.activeWindows()
	if len(ws) == 0 {
		return
	}
	w := ws[len(ws)-1]
	w.failedMu.Lock()
	for i, err := range errs {
		if err != nil {
			w.failedIntended = append(w.failedIntended, intended[i])
		}
	}
	w.failedMu.Unlock()
}

// chargeProduceErrors charges each failed send as a lost message is charged (ledger.Charge: the
// first destructive window that ended at or after the message's intended time, else the first
// such window), among the windows that had begun when the send failed: failed[k] holds the
// intended times of sends that failed while windows 0..k had begun. So a send that fails during
// a crash is the crash's even when a consumer pause fired after it, and a fault never pays for a
// failure from before it began.
func chargeProduceErrors(spans []ledger.Window, failed [][]int64) []int64 {
	out := make([]int64, len(spans))
	for k, ts := range failed {
		for _, t := range ts {
			if i := ledger.Charge(spans[:k+1], t); i >= 0 {
				out[i]++
			}
		}
	}
	return out
}

// faultLateWarn is how late an engine-side fault may fire before the run says so: validation
// refuses plans in which one is due while another holds the engine, but a recovery (a restart,
// an election) can take longer than the plan left for it.
const faultLateWarn = 100 * time.Millisecond

// scheduleFaults fires the scenario's faults at their offsets. Consumer-side faults are handed
// to their consumer at once; engine-side ones are carried out one at a time by a goroutine of
// their own (a stall, a crash's downtime or a full disk holds it for the fault's duration), so
// a consumer fault planned during one still fires on schedule. Validation refuses plans with an
// engine-side fault due while another holds the engine (scenarios' validateFaultOverlap); one
// that fires late all the same (a slow recovery) is reported, not hidden. over is closed when
// the consumers have stopped: a command's background work still going then never ended in the run.
func (r *run) scheduleFaults(ctx, stop context.Context, over <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	var watchers sync.WaitGroup
	engineSide := make(chan scenarios.Fault, len(r.sc.Faults))
	go func() {
		defer close(done)
		defer watchers.Wait()
		for f := range engineSide {
			if stop.Err() != nil || ctx.Err() != nil {
				continue
			}
			if late := time.Since(r.epoch.Add(f.At.D())); late > faultLateWarn {
				err := fmt.Errorf("%s planned at %s fired %s late: the previous server-side fault was still being carried out (its recovery took longer than the plan left)",
					f.Kind, f.At, late.Round(time.Millisecond))
				r.noteErr("fault", err)
				r.opts.Logf("%v", err)
			}
			r.fireWindow(ctx, stop, over, f, &watchers)
		}
	}()
	go func() {
		defer close(engineSide)
		faults := append([]scenarios.Fault(nil), r.sc.Faults...)
		sort.SliceStable(faults, func(i, j int) bool { return faults[i].At < faults[j].At })
		for _, f := range faults {
			if !r.firesHere(f) {
				continue // another segment fires it
			}
			wait := time.Until(r.epoch.Add(f.At.D()))
			select {
			case <-time.After(wait):
			case <-stop.Done():
				return
			case <-ctx.Done():
				return
			}
			if f.Kind.EngineSide() {
				engineSide <- f // never blocks: room for every fault
				continue
			}
			r.fireWindow(ctx, stop, over, f, &watchers) // consumer-side: no background work to watch
		}
	}()
	return done
}

// firesHere reports whether this process fires f: every fault in a run of one process; in a
// segment, an engine-side fault the scenario gives to this segment (its segment:) and a consumer
// fault of a consumer this segment runs (the engine is shared; consumers are dealt, Deal).
func (r *run) firesHere(f scenarios.Fault) bool {
	return r.seg == nil || f.FiredBySegment(r.seg.opts.Index, r.localConsumer)
}

// watchBackground ends a command fault's window when the background work the command started
// (BGREWRITEAOF's rewrite, BGSAVE's snapshot) has finished, as the engine reports it, polled
// every 10 ms on a goroutine of its own so that later faults still fire on time. A command that
// started none, or on an engine that cannot tell, is an instant; work still going when the
// consumers stop leaves the window open (it never ended in the run).
func (r *run) watchBackground(ctx, stop context.Context, over <-chan struct{}, w *faultWindow, wg *sync.WaitGroup) {
	b, ok := r.eng.(engines.BackgroundReporter)
	if !ok {
		w.instant.Store(true)
		return
	}
	if busy, err := b.BackgroundBusy(ctx); err != nil || !busy {
		w.instant.Store(true)
		return
	}
	// Open until the work is done; a write or read seen meanwhile is no recovery from it.
	w.endNs.Store(math.MaxInt64)
	w.firstWrite.Store(0)
	w.firstRead.Store(0)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-over:
				return
			case <-stop.Done():
				return
			case <-ctx.Done():
				return
			}
			if busy, err := b.BackgroundBusy(ctx); err == nil && !busy {
				end := r.since()
				w.endNs.Store(end)
				// One seen by a noteRecovery that read the old end as we cleared it.
				for _, first := range []*atomic.Int64{&w.firstWrite, &w.firstRead} {
					if v := first.Load(); v != 0 && v < end {
						first.CompareAndSwap(v, 0)
					}
				}
				return
			}
		}
	}()
}

// fireWindow opens the fault's window now and carries the fault out.
func (r *run) fireWindow(ctx, stop context.Context, over <-chan struct{}, f scenarios.Fault, watchers *sync.WaitGroup) {
	w := &faultWindow{fault: f, startNs: r.since()}
	w.endNs.Store(w.startNs + int64(f.Duration))
	if t, _ := f.Kind.Traits(); t.EndsOnRecovery {
		w.endNs.Store(math.MaxInt64) // until the server answers again
	}
	r.windowsMu.Lock()
	r.windows = append(r.windows, w)
	r.windowsMu.Unlock()
	if err := r.fire(ctx, f, w); err != nil {
		w.err = err
		r.noteErr("fault", err)
		r.opts.Logf("fault %s at %s: %v", f.Kind, f.At, err)
	} else if f.Kind == scenarios.FaultCommand {
		r.watchBackground(ctx, stop, over, w, watchers)
	}
}

func (r *run) fire(ctx context.Context, f scenarios.Fault, w *faultWindow) error {
	if t, _ := f.Kind.Traits(); t.ConsumerSide {
		r.consumerFaults[f.Consumer] <- f
		return nil
	}
	if t, ok := r.eng.(engines.ShardTargeter); ok {
		t.TargetShard(f.Shard) // primary-kill, node-restart: whose primary (redis-cluster)
	}
	if h, ok := r.eng.(engines.ReplicaHolder); ok {
		h.HoldReplicas(f.ReplicasBehind.D())
	} else if f.ReplicasBehind > 0 {
		return fmt.Errorf("engine %s cannot hold replicas behind", r.sc.Engine)
	}
	switch f.Kind {
	case scenarios.FaultStall:
		s, ok := r.eng.(engines.Staller)
		if !ok {
			return fmt.Errorf("engine %s cannot stall", r.sc.Engine)
		}
		return s.Stall(ctx, f.Duration.D())
	case scenarios.FaultNodeRestart:
		// A Kafka cluster restarts the partition's leader cleanly; a Redis Cluster crashes a
		// primary and restarts it on its directory.
		if _, ok := r.eng.(engines.LeaderKiller); ok {
			return r.fireLeaderKill(ctx, f, w)
		}
		return r.crashAndRestart(ctx, f, w)
	case scenarios.FaultServerCrash, scenarios.FaultPowerLoss:
		return r.crashAndRestart(ctx, f, w)
	case scenarios.FaultDiskFull:
		d, ok := r.eng.(engines.DiskFiller)
		if !ok {
			return fmt.Errorf("engine %s cannot fill its disk", r.sc.Engine)
		}
		if err := d.DiskFull(ctx, true); err != nil {
			return err
		}
		sleepCtx(ctx, f.Duration.D())
		if err := d.DiskFull(context.WithoutCancel(ctx), false); err != nil {
			return err
		}
		return r.restartDead(ctx, f, w)
	case scenarios.FaultIOError:
		d, ok := r.eng.(engines.IOFailer)
		if !ok {
			return fmt.Errorf("engine %s cannot fail its disk's I/O", r.sc.Engine)
		}
		if err := d.IOError(ctx, f.Point); err != nil {
			return err
		}
		sleepCtx(ctx, f.Duration.D())
		if err := d.IOError(context.WithoutCancel(ctx), ""); err != nil {
			return err
		}
		return r.restartDead(ctx, f, w)
	case scenarios.FaultForkFailure:
		ff, ok := r.eng.(engines.ForkFailer)
		if !ok {
			return fmt.Errorf("engine %s cannot make its server's fork fail", r.sc.Engine)
		}
		if err := ff.ForkFail(ctx, true); err != nil {
			return err
		}
		sleepCtx(ctx, f.Duration.D())
		// Undone even when the run is stopped: the server must be able to save again.
		return ff.ForkFail(context.WithoutCancel(ctx), false)
	case scenarios.FaultCommand:
		c, ok := r.eng.(engines.Commander)
		if !ok {
			return fmt.Errorf("engine %s takes no commands", r.sc.Engine)
		}
		_, err := c.Command(ctx, f.Command...)
		return err
	case scenarios.FaultFailover, scenarios.FaultPrimaryKill: // primary-kill: a cluster's primary, its replica promoted by the cluster
		fo, ok := r.eng.(engines.FailoverTarget)
		if !ok {
			return fmt.Errorf("engine %s cannot fail over", r.sc.Engine)
		}
		err := fo.Failover(ctx)
		if fr, ok := r.eng.(engines.FailoverReporter); ok {
			w.target = fr.LastFailover() // which node, how, and who took over
		}
		w.endNs.Store(r.since()) // the replica is primary
		return err
	case scenarios.FaultPartitionLeaderKill:
		return r.fireLeaderKill(ctx, f, w)
	case scenarios.FaultLeaderMove:
		lm, ok := r.eng.(engines.LeaderMover)
		if !ok {
			return fmt.Errorf("engine %s cannot move a leader", r.sc.Engine)
		}
		mv, err := lm.MoveLeader(ctx)
		if mv.From != "" {
			w.target = "leader " + mv.From
			if mv.To != "" {
				w.target += ", leader now " + mv.To
			}
		}
		w.endNs.Store(r.since()) // writes go to the new leader
		return err
	case scenarios.FaultPartition:
		return r.firePartition(ctx, f, w)
	}
	return fmt.Errorf("fault %q not supported", f.Kind)
}

// restartDead starts the server again when it exited of a disk-full or io-error on its own (Redis
// under appendfsync always), RestartAfter after the fault ended, as a supervisor would: the
// window then lasts until the server answers again. Without restart_after, or a server that did
// not die, it does nothing. The dead process's cost cannot be read, so the engine's cost figures
// are marked unknown (procTracker), as for any process qbench could not sample before it went.
func (r *run) restartDead(ctx context.Context, f scenarios.Fault, w *faultWindow) error {
	dr, ok := r.eng.(engines.DeathReporter)
	if f.RestartAfter <= 0 || !ok {
		return nil
	}
	if _, died := dr.Died(); !died {
		return nil
	}
	w.endNs.Store(math.MaxInt64) // until it answers again
	w.firstWrite.Store(0)
	w.firstRead.Store(0)
	sleepCtx(ctx, f.RestartAfter.D())
	// A process crash of what is left (its group), then the restart: the engine keeps the death.
	return r.crashAndRestart(ctx, scenarios.Fault{Kind: scenarios.FaultServerCrash}, w)
}

// crashAndRestart kills the server without warning (a power cut too, for power-loss), waits the
// fault's duration and brings it back on the same address and directory.
func (r *run) crashAndRestart(ctx context.Context, f scenarios.Fault, w *faultWindow) error {
	c, ok := r.eng.(engines.Crasher)
	if !ok {
		return fmt.Errorf("engine %s cannot crash its server", r.sc.Engine)
	}
	kind := engines.ProcessCrash
	if f.Kind == scenarios.FaultPowerLoss {
		kind = engines.PowerLoss
	}
	// The dying process's cost is read just before the kill and the new one's baseline once it
	// is back, so the run's engine cost sums both (procTracker).
	tracked := r.procStart.ok || r.procStart.fsyncsOK || r.procStart.logOK
	var pre procSample
	if tracked {
		// Bounded: a server that does not answer (a stall) must not hold the crash back long.
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		pre = engineProc(pctx, r.eng)
		cancel()
		r.procs.beforeCrash(pre)
	}
	if err := c.Crash(ctx, kind); err != nil {
		if tracked {
			r.procs.crashFailed(pre)
		}
		return err
	}
	sleepCtx(ctx, f.Duration.D())
	err := c.Restart(ctx)
	w.endNs.Store(r.since()) // the server is back
	if tracked && err == nil {
		r.procs.afterRestart(engineProc(ctx, r.eng))
	}
	return err
}

// faultWindows reports what each fired fault cost.
func (r *run) faultWindows(series []results.Interval, samples []results.LagSample) []results.FaultWindow {
	ws := r.activeWindows()
	spans := make([]ledger.Window, len(ws))
	died, diedIn, down := r.engineDeath(ws)
	r.died = died
	for i, w := range ws {
		spans[i] = ledger.Window{StartNs: w.startNs, EndNs: max(w.endNs.Load(), w.heldUntil.Load()), Destructive: w.destructive()}
		if i == diedIn && down {
			spans[i].EndNs = math.MaxInt64 // the server it killed never came back: all that followed is its cost
		}
	}
	r.spans = spans
	costs := r.ledger.Attribute(spans)
	failed := make([][]int64, len(ws))
	for i, w := range ws {
		w.failedMu.Lock()
		failed[i] = w.failedIntended
		w.failedMu.Unlock()
	}
	produceErrs := chargeProduceErrors(spans, failed)
	out := make([]results.FaultWindow, len(ws))
	for i, w := range ws {
		fw := results.FaultWindow{
			Kind: string(w.fault.Kind), Target: "server", StartNs: w.startNs, EndNs: w.endNs.Load(), Instant: w.instant.Load(),
			Lost: costs[i].Lost, Duplicates: costs[i].Duplicates, ProduceErrors: produceErrs[i],
			RecoverWriteNs: -1, RecoverReadNs: -1, LastDurableNs: costs[i].LastDurableNs, Marked: w.marked,
		}
		if costs[i].OldestLostNs >= 0 {
			fw.LossWindowNs = max(0, w.startNs-costs[i].OldestLostNs)
		}
		if t, _ := w.fault.Kind.Traits(); t.ConsumerSide && !w.marked {
			fw.Target = fmt.Sprintf("consumer %d", w.fault.Consumer)
		}
		if w.target != "" {
			fw.Target = w.target
		}
		if w.err != nil {
			fw.Error = w.err.Error()
		}
		fw.EngineDied = i == diedIn
		if t := w.firstWrite.Load(); t > 0 {
			fw.RecoverWriteNs = t - fw.EndNs
		}
		if t := w.firstRead.Load(); t > 0 {
			fw.RecoverReadNs = t - fw.EndNs
		}
		// Each fault's own window and the tail the fast sampler covers, however the windows
		// overlap: two faults at once both see the backlog they made together.
		fw.LagPeak, fw.EngineLagPeak = results.LagPeaks(series, samples, w.startNs, satAdd(fw.EndNs, int64(lagSampleTail)))
		out[i] = fw
	}
	return out
}

// fireLeaderKill stops the broker leading partition 0 (SIGKILL for partition-leader-kill, a clean
// shutdown for node-restart) and starts it again after the fault's duration; a killed leader with
// duration 0 stays down. The window ends when writes can go somewhere again: at the new leader's
// election for a kill, when the node is back for a restart (or a kill no other replica could take
// over). The time writes failed is then the window plus its recover_write time.
func (r *run) fireLeaderKill(ctx context.Context, f scenarios.Fault, w *faultWindow) error {
	lk, ok := r.eng.(engines.LeaderKiller)
	if !ok {
		return fmt.Errorf("engine %s cannot kill a partition leader", r.sc.Engine)
	}
	crash := f.Kind == "partition-leader-kill"
	ch, err := lk.KillLeader(ctx, crash)
	if ch.Node == 0 {
		w.endNs.Store(r.since())
		return err
	}
	w.target = fmt.Sprintf("broker %d", ch.Node)
	if ch.NewLeader != 0 {
		w.target += fmt.Sprintf(", leader now %d", ch.NewLeader)
		if crash {
			w.endNs.Store(r.since())
		}
	}
	if crash && f.Duration == 0 {
		if ch.NewLeader == 0 {
			w.endNs.Store(r.since())
		}
		return err
	}
	sleepCtx(ctx, f.Duration.D())
	rerr := lk.RestartNode(context.WithoutCancel(ctx), ch.Node)
	if !crash || ch.NewLeader == 0 {
		w.endNs.Store(r.since())
	}
	if err != nil || rerr != nil {
		return fmt.Errorf("%s of broker %d: %w", f.Kind, ch.Node, errors.Join(err, rerr))
	}
	return nil
}

// firePartition cuts the target shard's primary off for the fault's duration. The window ends
// when the partition heals; Heal then waits for the cluster to settle (the old primary rejoining
// as a replica), which costs no writes of its own. The heal runs even when the run is stopped.
func (r *run) firePartition(ctx context.Context, f scenarios.Fault, w *faultWindow) error {
	p, ok := r.eng.(engines.Partitioner)
	if !ok {
		return fmt.Errorf("engine %s cannot partition a node", r.sc.Engine)
	}
	target, err := p.Partition(ctx)
	if err != nil {
		w.endNs.Store(r.since())
		return err
	}
	w.target = target
	sleepCtx(ctx, f.Duration.D())
	w.endNs.Store(r.since())
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	now, err := p.Heal(hctx)
	if now != "" { // read only once the fault goroutine is done
		w.target += ", primary now " + now
	}
	return err
}

// engineDeath reads the engine's server exiting on its own (engines.DeathReporter): how, as the
// result reports it, and the fault window it died in (the latest engine-side one begun before
// it; -1 for none), so a run whose server exited on an AOF error is never read as one that only
// saw "connection refused". down: it was not started again (restart_after), so every failure
// and loss from then on is that window's cost.
func (r *run) engineDeath(ws []*faultWindow) (d *results.EngineDeath, window int, down bool) {
	dr, ok := r.eng.(engines.DeathReporter)
	if !ok {
		return nil, -1, false
	}
	death, died := dr.Died()
	if !died {
		return nil, -1, false
	}
	d = &results.EngineDeath{AtNs: death.At.Sub(r.epoch).Nanoseconds(), Status: death.Status, Log: death.Log}
	window = -1
	for i, w := range ws {
		if t, _ := w.fault.Kind.Traits(); w.startNs <= d.AtNs && !t.ConsumerSide && !w.marked {
			window = i
		}
	}
	return d, window, death.Down
}
