// Package bench runs a scenario against an engine: it paces producers on an open-loop schedule
// (or a closed loop), stamps every message, records produce, send-delay and end-to-end latency
// from the intended send time, samples lag each second, fires faults, and accounts for every
// message in a ledger. It never imports a concrete engine: it finds one in the engines registry.
package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"qbench/bench/ledger"
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
)

// Version is qbench's version, written into results.
var Version = "0.1.0-dev"

// Progress is reported once a second while a run goes on.
type Progress struct {
	Elapsed  time.Duration
	Duration time.Duration
	Warmup   bool
	// Rate is acknowledged messages in the last second.
	Rate int64
	// ProduceP99 is the last second's produce latency p99.
	ProduceP99 time.Duration
	Lag        int64
	Acked      int64
	Lost       int64
}

// Options tune a run without changing the scenario.
type Options struct {
	// RunID names everything the run creates; empty means a fresh one.
	RunID string
	// Progress, when set, is called once a second from the sampler goroutine.
	Progress func(Progress)
	// Logf reports warnings; nil is silent.
	Logf func(format string, args ...any)
	// Segment, when set, runs only this segment's share of the scenario (segment.go).
	Segment *SegmentOptions
	// Marks, when set, takes external fault marks during the run's load (marks.go).
	Marks *MarkBoard
	// Metrics, when set, is the live Prometheus view the run reports to (metrics.go); Cell
	// labels it with a matrix cell's name.
	Metrics *Metrics
	Cell    string
	// Stream, when set, receives the series as the run goes (stream.go).
	Stream SeriesSink
}

// ErrStartInterrupted is a run stopped (stop cancelled: Ctrl-C) before its load began, while the
// engine was starting or being set up: there is no result. Whatever the engine had started has
// been stopped.
var ErrStartInterrupted = errors.New("interrupted during the engine's start-up; nothing was measured")

// Run executes sc and returns its result. Cancelling stop ends the load early and still returns a
// result marked Interrupted; cancelling ctx abandons engine calls too.
func Run(ctx, stop context.Context, sc *scenarios.Scenario, opts Options) (*results.Result, error) {
	reg, err := engines.Lookup(sc.Engine)
	if err != nil {
		return nil, err
	}
	if err := segmentOptions(sc, &opts); err != nil {
		return nil, err
	}
	if opts.RunID == "" {
		opts.RunID = NewRunID()
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	// Start-up (the engine's processes and its set-up) ends on the first Ctrl-C too, not only on
	// the second: a three-broker Kafka takes 30-100 s to start, a Redis Cluster seconds, and a
	// run interrupted before its load began has nothing to measure. Once started, the engine is
	// no longer tied to stop (an interrupted run still drains, sweeps and tears down).
	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart() // after eng.Close (deferred later, so run earlier)
	unhook := context.AfterFunc(stop, cancelStart)
	eng, err := reg.New(startCtx, specFor(sc, opts.RunID))
	if err != nil {
		if stop.Err() != nil {
			return nil, fmt.Errorf("engine %s: %w (%v)", sc.Engine, ErrStartInterrupted, err)
		}
		return nil, fmt.Errorf("engine %s: %w", sc.Engine, err)
	}
	defer eng.Close() // stops every process New started and removes its directories
	err = eng.Setup(startCtx)
	if !unhook() || stop.Err() != nil {
		// What a set-up cut short created is removed, within the interrupted run's bound.
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptedCleanup)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- eng.Teardown(tctx) }()
		select {
		case terr := <-done:
			if terr != nil {
				opts.Logf("tear-down: %v", terr)
			}
		case <-time.After(interruptedCleanup): // a client that does not honour its deadline
			opts.Logf("tear-down: no answer within %s; abandoned", interruptedCleanup)
		}
		return nil, fmt.Errorf("engine %s: %w", sc.Engine, ErrStartInterrupted)
	}
	if err != nil {
		return nil, fmt.Errorf("engine %s: set-up: %w", sc.Engine, err)
	}
	var r *run
	defer func() {
		if opts.Segment != nil {
			return // another segment may still be at work: see SegmentOptions
		}
		timeout := 10 * time.Second
		if stop.Err() != nil && r != nil {
			timeout = r.cleanupLeft() // Ctrl-C: stop within a second, even if the server hangs
		}
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- eng.Teardown(tctx) }()
		select {
		case err := <-done:
			if err != nil {
				opts.Logf("tear-down: %v", err)
			}
		case <-time.After(timeout): // a client that does not honour its deadline
			opts.Logf("tear-down: no answer within %s; abandoned", timeout)
		}
	}()
	groups, groupOf := 1, func(int) int { return 0 }
	if g, ok := eng.(engines.Grouper); ok {
		groups, groupOf = g.Groups(), g.GroupOf
	}
	r = &run{sc: sc, opts: opts, eng: eng, tag: stampTag(sc, opts.RunID), ledger: newRunLedger(sc, opts, groups),
		groupOf: groupOf, groups: groups, errs: map[[2]string]int64{}, started: time.Now(), sizer: NewSizer(sc.MessageSize, sc.Seed),
		scheduleEnd: scheduleEnd(sc), binWidth: results.BinWidth(sc.Duration.D(), len(sc.Faults) > 0)}
	if ip, ok := eng.(engines.InProcess); ok && ip.InProcess() {
		r.engineInProcess = true
	}
	if sc.Backlog.Set() {
		r.backlog = newBacklogPhase(sc, groups)
	}
	r.reorderScope, r.reorderNotPromised = r.setOrder()
	r.ledger.SetPoison(uint64(max(sc.PoisonEvery, 0)))
	r.msgCap.limit = sc.MessageCap() // rate: max only (msgcap.go)
	r.joinSegment()
	r.reserveLedger()
	r.live = opts.Metrics.attach(r)
	res, err := r.segmentResult(r.execute(ctx, stop))
	r.capWarning(res)
	r.live.finish(res)
	return res, err
}

// After a Ctrl-C (stop), engine calls still in flight get stopGrace to finish (so that an
// interrupted run's ledger is as complete as it can be) before they are abandoned; everything
// after that (waiting for loops, the final sweep, the engine's facts, the tear-down) shares
// interruptedCleanup: the whole run stops within about a second even when the server is stalled,
// a consumer is in a long piece of work or a fault is holding.
const (
	stopGrace          = 200 * time.Millisecond
	interruptedCleanup = 500 * time.Millisecond
)

// cleanupLeft is what is left of interruptedCleanup after the run was abandoned (at least a
// little, so that a call that would answer at once still can).
func (r *run) cleanupLeft() time.Duration {
	by := r.cleanupBy.Load()
	if by == 0 {
		return interruptedCleanup
	}
	return max(time.Until(time.Unix(0, by)), 20*time.Millisecond)
}

// stampTag is the run tag messages are stamped with: the run's own, except in a produce-only or
// consume-only run against a named queue, which stamp with (and recognise) a tag derived from the
// design and the queue's name (the first name the engine's registration declares for the
// design), so that a consume-only run knows the messages a produce-only run left there and
// counts anything else as foreign. (Two produce-only runs into the same queue between consume
// runs therefore look like one run sending every sequence number twice.)
func stampTag(sc *scenarios.Scenario, runID string) uint64 {
	if sc.Produces() && sc.Consumes() {
		return runTag(runID)
	}
	if r, err := engines.Lookup(sc.Engine); err == nil {
		if keys := r.Names[sc.Design]; len(keys) > 0 && sc.Names[keys[0]] != "" {
			return runTag("names\x00" + sc.Design + "\x00" + keys[0] + "\x00" + sc.Names[keys[0]])
		}
	}
	return runTag(runID)
}

// NewRunID returns a short unique run ID.
func NewRunID() string {
	return fmt.Sprintf("%x-%04x", time.Now().Unix(), os.Getpid()&0xffff)
}

// faultKinds are the kinds of the scenario's faults, for the engine to prepare.
func faultKinds(sc *scenarios.Scenario) []string {
	var out []string
	held := false
	for _, f := range sc.Faults {
		out = append(out, string(f.Kind))
		held = held || f.ReplicasBehind > 0
	}
	if held {
		out = append(out, engines.HoldsReplicas)
	}
	return out
}

// faultShards are the shards the scenario's engine-side faults hit, by kind.
func faultShards(sc *scenarios.Scenario) map[string][]int {
	var out map[string][]int
	for _, f := range sc.Faults {
		if !f.Kind.EngineSide() {
			continue
		}
		if out == nil {
			out = map[string][]int{}
		}
		if k := string(f.Kind); !slices.Contains(out[k], f.Shard) {
			out[k] = append(out[k], f.Shard)
		}
	}
	return out
}

func specFor(sc *scenarios.Scenario, runID string) engines.Spec {
	return engines.Spec{
		RunID: runID, Design: sc.Design, Producers: sc.Producers, Consumers: sc.Consumers, Replicas: sc.Replicas, InFlight: sc.InFlight,
		Shards: sc.Shards, ShardRouting: sc.ShardRouting, Faults: faultKinds(sc), ShardSkew: sc.ShardSkew, Seed: sc.Seed,
		Names: maps.Clone(sc.Names), FaultShards: faultShards(sc),
		LossyFS: sc.NeedsLossyFS(),
		// The engine's own section (redis:, kafka:) as its registration decoded it.
		Address: sc.Address, Persistence: sc.EffectivePersistence(), Options: sc.Options,
	}
}

type run struct {
	sc       *scenarios.Scenario
	binWidth time.Duration // the latency bins' width (results.BinWidth)
	opts     Options
	eng      engines.Engine
	// engineInProcess: the engine's server runs in this process (engines.InProcess), so the
	// pacer's spin yields to it.
	engineInProcess bool
	tag             uint64
	seg             *segmentRun // nil unless this is one segment of a run from several processes
	ledger          runLedger
	groupOf         func(consumer int) int
	started         time.Time
	epoch           time.Time            // the schedule's time zero; set when producers start
	died            *results.EngineDeath // the server's own exit, read with the fault windows
	// scheduleEnd is when the producers' schedules end, since the epoch (the duration, plus a
	// backlog's fill when producers keep going).
	scheduleEnd time.Duration
	// reorderScope is the order the ledger holds the engine to, or reorderNotPromised why
	// none (setOrder).
	reorderScope, reorderNotPromised string
	// backlog is the scenario's backlog phase; nil without one.
	backlog *backlogPhase
	msgCap  messageCap // a rate: max run's cap (msgcap.go)
	// hard ends stopGrace after stop (Ctrl-C), or with the run's context: the loops' engine calls,
	// consumers' work and faults end with it.
	hard context.Context
	// cleanupBy is when an interrupted run's clean-up must be over (unix ns; 0 until abandoned).
	cleanupBy atomic.Int64
	cost      selfCost // the generator's own CPU, producers' start to consumers' stop
	// procStart and procEnd sample the engine's server process over the same span; procs sums
	// its cost across the restarts of crash faults.
	procStart, procEnd procSample
	procs              procTracker

	producerRecs, consumerRecs []*recorder
	consumerFaults             []chan scenarios.Fault
	// pacerStats are the producers' timer figures (pacerstat.go), by producer; nil for one not
	// run here.
	pacerStats []*pacerStats
	// consumerCounts are each consumer's deliveries and duplicates (per_consumer in the summary).
	consumerCounts []consumerCount
	// pendingEnd is each consumer's unacknowledged deliveries when the run ended (grouplag.go);
	// nil when the engine keeps no such record.
	pendingEnd []int64

	// Per-interval counters, swapped to zero by the sampler.
	ackedN, failedN, deliveredN atomic.Int64
	ackedBytes, deliveredBytes  atomic.Int64
	// measuredAckedBytes is the payload bytes of acknowledged messages intended after warm-up.
	measuredAckedBytes atomic.Int64
	// sizer draws each message's size (message_size); buffers are sized for its largest.
	sizer                    *Sizer
	produceErrs, consumeErrs atomic.Int64
	unsent                   atomic.Int64
	inFlightFull             atomic.Int64 // times a due batch waited for an in-flight slot
	// lateHeld and lateOwn count measured messages sent at least results.WarnSendDelayMinNs
	// late: held by the engine (every in-flight slot awaited its answer), or late for the
	// generator's own reasons.
	lateHeld, lateOwn atomic.Int64
	foreign           atomic.Int64

	errMu sync.Mutex
	errs  map[[2]string]int64

	// window is what the measured window saw, set when producers finish.
	window struct {
		producersDone, drain time.Duration
		sweep                float64 // seconds the final sweep took
		// deliveries made inside the measured window (warm-up end to producers done).
		deliveries int64
	}
	groups int

	// windows are the faults fired so far, in firing order; producers and consumers note the
	// first success after each one's end.
	windowsMu sync.Mutex
	windows   []*faultWindow
	// spans are the windows as the ledger charged them (faultWindows), for a segment's result.
	spans []ledger.Window

	live *liveRun // the live metrics' view of this run; nil without one (metrics.go)
}

func (r *run) since() int64 { return int64(time.Since(r.epoch)) }

// noteErr counts an error by where it happened and its text, for the result's errors: at most
// 100 distinct ones, except the final sweep's, which is always kept (results.Assess flags the
// run sweep-failed by it).
func (r *run) noteErr(where string, err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	k := [2]string{where, err.Error()}
	if _, ok := r.errs[k]; ok || len(r.errs) < 100 || where == results.ErrorWhereSweep {
		r.errs[k]++
	}
}

func (r *run) execute(ctx, stop context.Context) (*results.Result, error) {
	sc := r.sc
	outer := ctx
	ctx, abandon := context.WithCancel(ctx)
	defer abandon()
	r.hard = ctx
	go func() {
		select {
		case <-stop.Done():
			select {
			case <-time.After(stopGrace):
			case <-ctx.Done():
			}
			r.cleanupBy.Store(time.Now().Add(interruptedCleanup).UnixNano())
			abandon()
		case <-ctx.Done():
		}
	}()
	warmupNs := int64(sc.Warmup)

	consumers := make([]engines.Consumer, sc.Consumers)
	closeConsumers := func() {
		for _, c := range consumers {
			if c != nil {
				c.Close()
			}
		}
	}
	r.consumerCounts = make([]consumerCount, len(consumers))
	for i := range consumers {
		r.consumerRecs = append(r.consumerRecs, newRecorder(r.binWidth))
		r.consumerFaults = append(r.consumerFaults, make(chan scenarios.Fault, 4))
		// A produce-only run opens no consumers; another segment's are opened there.
		if !sc.Consumes() || !r.localConsumer(i) {
			continue
		}
		c, err := r.eng.NewConsumer(ctx, i)
		if err != nil {
			closeConsumers()
			return nil, fmt.Errorf("consumer %d: %w", i, err)
		}
		consumers[i] = c
	}
	producers := make([]engines.Producer, sc.Producers)
	for i := range producers {
		r.producerRecs = append(r.producerRecs, newRecorder(r.binWidth))
		// A consume-only run opens no producers; another segment's are opened there.
		if !sc.Produces() || !r.localProducer(i) {
			continue
		}
		p, err := r.eng.NewProducer(ctx, i)
		if err != nil {
			closeConsumers()
			return nil, fmt.Errorf("producer %d: %w", i, err)
		}
		defer p.Close()
		producers[i] = p
	}
	if r.seg != nil {
		if err := r.segmentStart(ctx, stop); err != nil {
			closeConsumers()
			return nil, err
		}
	}

	r.pacerStats = make([]*pacerStats, len(producers))
	for i, p := range producers {
		if p != nil {
			r.pacerStats[i] = newPacerStats()
		}
	}
	r.procStart = engineProc(ctx, r.eng)
	r.procs.start(r.procStart)
	r.epoch = time.Now()
	r.opts.Marks.begin(r)
	defer r.opts.Marks.end(r) // an early return too
	for _, st := range r.pacerStats {
		if st != nil {
			st.from = r.epoch.Add(sc.Warmup.D())
		}
	}
	r.cost.start()
	consumeCtx, stopConsumers := context.WithCancel(ctx)
	defer stopConsumers()
	var cwg, pwg sync.WaitGroup
	for i, c := range consumers {
		if c == nil {
			continue
		}
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			if r.backlog != nil && !r.backlog.waitStart(consumeCtx) {
				c.Close()
				return
			}
			r.consume(consumeCtx, i, c, r.groupOf(i), r.consumerRecs[i], warmupNs)
		}()
	}
	produceStop, stopProducing := r.produceStop(stop)
	defer stopProducing()
	// A segment's consumers judge the warm-up on the stamps' shared clock (consume.go); its
	// producers judge it there too, or a message intended near the warm-up's end is measured by
	// one side only (e2e counts it, produce does not) when this segment started late.
	produceWarmupNs := warmupNs - r.stampShift()
	for i, p := range producers {
		if p == nil {
			continue
		}
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			r.produce(ctx, produceStop, i, p, r.producerRecs[i], produceWarmupNs)
		}()
	}

	samplerDone := make(chan struct{})
	s := newSampler(r)
	go func() {
		defer close(samplerDone)
		s.loop(ctx)
	}()
	faultsDone := r.scheduleFaults(ctx, stop, consumeCtx.Done())
	// The measured window's deliveries are counted between the end of warm-up and the moment
	// producers finish, so the delivery rate is deliveries in the window over the window.
	var atWarmup int64
	warmupTaken := make(chan struct{})
	takeWarmup := func() { atWarmup = s.deliveriesSoFar(); close(warmupTaken) }
	if sc.Warmup == 0 {
		// No warm-up: nothing to leave out. (A timer of 0 still fires later, on another
		// goroutine, after a consumer may have read a whole stored backlog.)
		takeWarmup = func() { close(warmupTaken) }
	}
	warmupTimer := time.AfterFunc(sc.Warmup.D(), takeWarmup)

	if r.backlog != nil && !r.backlog.stop {
		// Producers keep their rate: consumers start when the fill's time is up.
		fill := time.AfterFunc(time.Until(r.epoch.Add(r.backlog.fillEnd)), func() { r.beginDrain(consumeCtx) })
		defer fill.Stop()
	}
	if !sc.Produces() {
		// Consume-only: consumers read for the duration.
		select {
		case <-time.After(sc.Duration.D()):
		case <-stop.Done():
		}
	}
	r.waitLoops(&pwg, "producer")
	producersDoneAt := time.Since(r.epoch)
	r.window.producersDone = producersDoneAt
	r.window.deliveries = s.deliveriesSoFar()
	if !warmupTimer.Stop() { // else the run ended inside its warm-up: the window is the whole run
		<-warmupTaken
		r.window.deliveries -= atWarmup
	}
	interrupted := stop.Err() != nil
	// Drain: consumers go on until every acknowledged message arrived and the engine reports
	// nothing left pending (redeliveries and dead-lettering finish), or the drain timeout.
	deadline := time.Now().Add(sc.DrainTimeout.D())
	if r.backlog != nil {
		// Producers stopped at the fill's end: the consumers start now and have the duration
		// (plus the drain timeout) to drain it.
		r.beginDrain(consumeCtx)
		if r.backlog.stop {
			deadline = deadline.Add(sc.Duration.D())
		}
	}
	// A produce-only run has nothing to wait for.
	drained := false
	for sc.Consumes() && !interrupted && time.Now().Before(deadline) {
		if drained = r.drained(ctx); drained {
			break
		}
		select {
		case <-stop.Done():
			interrupted = true
		case <-time.After(5 * time.Millisecond):
		}
	}
	if r.backlog != nil && drained {
		r.backlog.markDrained(r.since(), r.drainSource())
	}
	stopConsumers()
	r.waitLoops(&cwg, "consumer")
	r.opts.Marks.end(r)
	r.window.drain = time.Since(r.epoch) - producersDoneAt
	r.cost.stop()
	if (r.procStart.ok || r.procStart.fsyncsOK || r.procStart.logOK) && stop.Err() == nil {
		r.procEnd = engineProc(ctx, r.eng)
	}
	r.waitDone(faultsDone, "fault")
	s.stop()
	// The sampler may be blocked on the engine's lag (go-redis does not end a read when its
	// context does); after a Ctrl-C it is left behind like a loop.
	r.waitDone(samplerDone, "lag sample")
	s.harvest(true) // the last partial interval
	// What the engine still holds is queued, not lost. After a Ctrl-C the sweep is bounded, on
	// a context of its own (the run's has been abandoned).
	// A run that was one half of a pair cannot tell a backlog from a loss (the other half is
	// another run's): it does not sweep.
	switch {
	case !(sc.Produces() && sc.Consumes()):
	case interrupted || stop.Err() != nil:
		sctx, cancel := context.WithTimeout(context.WithoutCancel(outer), r.cleanupLeft())
		var seconds atomic.Value
		done := make(chan struct{})
		go func() { seconds.Store(r.sweepRemainder(sctx)); close(done) }()
		r.waitDone(done, "final sweep")
		if v, ok := seconds.Load().(float64); ok {
			r.window.sweep = v
		}
		cancel()
	default:
		r.window.sweep = r.sweepRemainder(outer)
	}

	return r.result(s, producersDoneAt, interrupted)
}

// waitLoops waits for the producer or consumer loops; once the run has been abandoned after a
// Ctrl-C it waits interruptedCleanup more at most. A loop still inside an engine call then (a
// client blocked on a stalled server does not see its context end) is left behind: the engine's
// Close ends its call, and the run says so. Without Ctrl-C it waits as long as the loops run.
func (r *run) waitLoops(wg *sync.WaitGroup, what string) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	r.waitDone(done, what)
}

func (r *run) waitDone(done <-chan struct{}, what string) {
	select {
	case <-done:
		return
	case <-r.hard.Done():
	}
	select {
	case <-done:
	case <-time.After(r.cleanupLeft()):
		r.noteErr("interrupt", fmt.Errorf("a %s was still inside an engine call %s after Ctrl-C and was abandoned", what, stopGrace+interruptedCleanup))
		r.opts.Logf("a %s was still inside an engine call after Ctrl-C; abandoned", what)
	}
}

// drainSource is what drained judged by: the engine's lag when it reports one.
func (r *run) drainSource() string {
	if _, ok := r.eng.(engines.LagReporter); ok {
		return "engine"
	}
	return "ledger"
}

// drained reports whether every acknowledged message has been delivered (to every group) and,
// where the engine reports lag, nothing is left in its backlog or pending.
func (r *run) drained(ctx context.Context) bool {
	if r.seg != nil {
		return r.segmentDrained(ctx)
	}
	if r.ledger.DeliveredUnique() < r.ledger.Acked() {
		return false
	}
	lr, ok := r.eng.(engines.LagReporter)
	if !ok {
		return true
	}
	lctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	lag, err := lr.Lag(lctx)
	if err != nil {
		return true // no answer is no evidence of a backlog; the ledger says all arrived
	}
	if lag.Backlog+lag.Pending > 0 {
		sleepCtx(ctx, 20*time.Millisecond)
		return false
	}
	return true
}
