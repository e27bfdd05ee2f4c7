// Package bench runs a scenario against an engine: it paces producers on an open-loop schedule
// (or a closed loop), stamps every message, records produce, send-delay and end-to-end latency
// from the intended send time, samples lag each second, fires faults, and accounts for every
// message in a ledger. It never imports a concrete engine: it finds one in the engines registry.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

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
}

// Run executes sc and returns its result. Cancelling stop ends the load early and still returns a
// result marked Interrupted; cancelling ctx abandons engine calls too.
func Run(ctx, stop context.Context, sc *scenarios.Scenario, opts Options) (*results.Result, error) {
	reg, err := engines.Lookup(sc.Engine)
	if err != nil {
		return nil, err
	}
	if !reg.Supports(sc.Design) {
		return nil, fmt.Errorf("engine %s does not support design %q (it supports %v)", sc.Engine, sc.Design, reg.Designs)
	}
	if opts.RunID == "" {
		opts.RunID = NewRunID()
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	eng, err := reg.New(ctx, specFor(sc, opts.RunID))
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", sc.Engine, err)
	}
	defer eng.Close()
	if err := eng.Setup(ctx); err != nil {
		return nil, fmt.Errorf("engine %s: set-up: %w", sc.Engine, err)
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := eng.Teardown(tctx); err != nil {
			opts.Logf("tear-down: %v", err)
		}
	}()
	groups, groupOf := 1, func(int) int { return 0 }
	if g, ok := eng.(engines.Grouper); ok {
		groups, groupOf = g.Groups(), g.GroupOf
	}
	r := &run{sc: sc, opts: opts, eng: eng, tag: runTag(opts.RunID), ledger: ledger.NewGroups(sc.Producers, groups),
		groupOf: groupOf, errs: map[[2]string]int64{}, started: time.Now()}
	return r.execute(ctx, stop)
}

// NewRunID returns a short unique run ID.
func NewRunID() string {
	return fmt.Sprintf("%x-%04x", time.Now().Unix(), os.Getpid()&0xffff)
}

func specFor(sc *scenarios.Scenario, runID string) engines.Spec {
	return engines.Spec{
		RunID: runID, Design: sc.Design, Producers: sc.Producers, Consumers: sc.Consumers, Replicas: sc.Replicas,
		LossyFS: sc.NeedsLossyFS(),
		Address: sc.Address, Persistence: sc.EffectivePersistence(),
		Stream: engines.StreamOptions{
			MaxLen: sc.Stream.MaxLen, ExactTrim: sc.Stream.ExactTrim, Ack: sc.Stream.Ack,
			Count: sc.Stream.Count, Block: sc.Stream.Block.D(), GroupStart: sc.Stream.GroupStart,
			Groups: sc.Stream.Groups, ClaimIdle: sc.Stream.ClaimIdle.D(), MaxDeliveries: sc.Stream.MaxDeliveries,
		},
		List: engines.ListOptions{
			Push: sc.List.Push, Timeout: sc.List.Timeout.D(),
			VisibilityTimeout: sc.List.VisibilityTimeout.D(), MaxDeliveries: sc.List.MaxDeliveries,
		},
		PubSub: engines.PubSubOptions{Pattern: sc.PubSub.Pattern},
		Wait: engines.WaitOptions{
			Replicas: sc.Wait.Replicas, AOFLocal: sc.Wait.AOFLocal, Timeout: sc.Wait.Timeout.D(), Required: sc.Wait.Required,
		},
	}
}

type run struct {
	sc      *scenarios.Scenario
	opts    Options
	eng     engines.Engine
	tag     uint64
	ledger  *ledger.Ledger
	groupOf func(consumer int) int
	started time.Time
	epoch   time.Time // the schedule's time zero; set when producers start

	producerRecs, consumerRecs []*recorder
	consumerFaults             []chan scenarios.Fault

	// Per-interval counters, swapped to zero by the sampler.
	ackedN, failedN, deliveredN atomic.Int64
	produceErrs, consumeErrs    atomic.Int64
	unsent                      atomic.Int64
	foreign                     atomic.Int64

	errMu sync.Mutex
	errs  map[[2]string]int64

	// windows are the faults fired so far, in firing order; producers and consumers note the
	// first success after each one's end.
	windowsMu sync.Mutex
	windows   []*faultWindow
}

type faultWindow struct {
	fault   scenarios.Fault
	startNs int64
	// endNs is when the fault ended: its start plus its duration, or, for a crash, when the
	// server answered again (unknown, so the largest int64, until then).
	endNs       atomic.Int64
	err         error
	firstWrite  atomic.Int64 // ns since epoch of the first ack after endNs; 0 = none yet
	firstRead   atomic.Int64
	produceErrs atomic.Int64
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

func (r *run) since() int64 { return int64(time.Since(r.epoch)) }

func (r *run) noteErr(where string, err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	k := [2]string{where, err.Error()}
	if _, ok := r.errs[k]; ok || len(r.errs) < 100 {
		r.errs[k]++
	}
}

func (r *run) execute(ctx, stop context.Context) (*results.Result, error) {
	sc := r.sc
	warmupNs := int64(sc.Warmup)

	consumers := make([]engines.Consumer, sc.Consumers)
	for i := range consumers {
		c, err := r.eng.NewConsumer(ctx, i)
		if err != nil {
			for _, c := range consumers[:i] {
				c.Close()
			}
			return nil, fmt.Errorf("consumer %d: %w", i, err)
		}
		consumers[i] = c
		r.consumerRecs = append(r.consumerRecs, newRecorder())
		r.consumerFaults = append(r.consumerFaults, make(chan scenarios.Fault, 4))
	}
	producers := make([]engines.Producer, sc.Producers)
	for i := range producers {
		p, err := r.eng.NewProducer(ctx, i)
		if err != nil {
			for _, c := range consumers {
				c.Close()
			}
			return nil, fmt.Errorf("producer %d: %w", i, err)
		}
		defer p.Close()
		producers[i] = p
		r.producerRecs = append(r.producerRecs, newRecorder())
	}

	r.epoch = time.Now()
	consumeCtx, stopConsumers := context.WithCancel(ctx)
	defer stopConsumers()
	var cwg, pwg sync.WaitGroup
	for i, c := range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			r.consume(consumeCtx, i, c, r.groupOf(i), r.consumerRecs[i], warmupNs)
		}()
	}
	for i, p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			r.produce(ctx, stop, i, p, r.producerRecs[i], warmupNs)
		}()
	}

	samplerDone := make(chan struct{})
	s := newSampler(r)
	go func() {
		defer close(samplerDone)
		s.loop(ctx, samplerDone)
	}()
	faultsDone := r.scheduleFaults(ctx, stop)

	pwg.Wait()
	producersDoneAt := time.Since(r.epoch)
	interrupted := stop.Err() != nil
	// Drain: consumers go on until every acknowledged message arrived and the engine reports
	// nothing left pending (redeliveries and dead-lettering finish), or the drain timeout.
	deadline := time.Now().Add(sc.DrainTimeout.D())
	for !interrupted && time.Now().Before(deadline) && !r.drained(ctx) {
		select {
		case <-stop.Done():
			interrupted = true
		case <-time.After(5 * time.Millisecond):
		}
	}
	stopConsumers()
	cwg.Wait()
	<-faultsDone
	s.stop()
	<-samplerDone
	s.harvest(true) // the last partial interval

	return r.result(s, producersDoneAt, interrupted)
}

// drained reports whether every acknowledged message has been delivered (to every group) and,
// where the engine reports lag, nothing is left in its backlog or pending.
func (r *run) drained(ctx context.Context) bool {
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
	for ctx.Err() == nil {
		select {
		case f := <-r.consumerFaults[id]:
			switch f.Kind {
			case "consumer-pause":
				if !sleepCtx(ctx, f.Duration.D()) {
					return
				}
			case "subscriber-offline":
				c.Close()
				c = nil
				if !sleepCtx(ctx, f.Duration.D()) {
					return
				}
				if c = r.reopen(ctx, id); c == nil {
					return
				}
			case "consumer-crash":
				crash = &f
			case "slow-consumer":
				slow, slowUntil = f.Work, time.Now().Add(f.Duration.D())
			}
			continue
		default:
		}
		ds, err := c.Receive(ctx)
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
		for _, d := range ds {
			st, err := DecodeStamp(d.Payload)
			if err != nil || st.RunTag != r.tag {
				r.foreign.Add(1)
				continue
			}
			rec.record(KindE2E, at-st.IntendedNs, st.IntendedNs >= warmupNs)
			r.ledger.DeliveredTo(group, int(st.Producer), st.Seq)
			if poison > 0 && st.Seq%poison != 0 {
				toAck = append(toAck, d)
			}
		}
		rec.mu.Unlock()
		r.noteRecovery(at, false)
		r.deliveredN.Add(int64(len(ds)))
		work := r.sc.Work.D() * time.Duration(len(ds))
		if slow != nil && time.Now().Before(slowUntil) {
			for range ds {
				work += slow.Sample(rng)
			}
		}
		if work > 0 {
			time.Sleep(work)
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
	c.Close()
	if f.RestartAfter <= 0 || !sleepCtx(ctx, f.RestartAfter.D()) {
		return nil
	}
	return r.reopen(ctx, id)
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

// scheduleFaults fires the scenario's faults at their offsets.
func (r *run) scheduleFaults(ctx, stop context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		faults := append([]scenarios.Fault(nil), r.sc.Faults...)
		sort.Slice(faults, func(i, j int) bool { return faults[i].At < faults[j].At })
		for _, f := range faults {
			wait := time.Until(r.epoch.Add(f.At.D()))
			select {
			case <-time.After(wait):
			case <-stop.Done():
				return
			case <-ctx.Done():
				return
			}
			w := &faultWindow{fault: f, startNs: r.since()}
			w.endNs.Store(w.startNs + int64(f.Duration))
			if f.Kind == "server-crash" || f.Kind == "power-loss" || f.Kind == "failover" {
				w.endNs.Store(math.MaxInt64)
			}
			r.windowsMu.Lock()
			r.windows = append(r.windows, w)
			r.windowsMu.Unlock()
			if err := r.fire(ctx, f); err != nil {
				w.err = err
				r.noteErr("fault", err)
				r.opts.Logf("fault %s at %s: %v", f.Kind, f.At, err)
			}
		}
	}()
	return done
}

func (r *run) fire(ctx context.Context, f scenarios.Fault) error {
	switch f.Kind {
	case "stall":
		s, ok := r.eng.(engines.Staller)
		if !ok {
			return fmt.Errorf("engine %s cannot stall", r.sc.Engine)
		}
		return s.Stall(ctx, f.Duration.D())
	case "server-crash", "power-loss":
		c, ok := r.eng.(engines.Crasher)
		if !ok {
			return fmt.Errorf("engine %s cannot crash its server", r.sc.Engine)
		}
		kind := engines.ProcessCrash
		if f.Kind == "power-loss" {
			kind = engines.PowerLoss
		}
		if err := c.Crash(ctx, kind); err != nil {
			return err
		}
		sleepCtx(ctx, f.Duration.D())
		err := c.Restart(ctx)
		ws := r.activeWindows()
		ws[len(ws)-1].endNs.Store(r.since()) // the server is back
		return err
	case "disk-full":
		d, ok := r.eng.(engines.DiskFiller)
		if !ok {
			return fmt.Errorf("engine %s cannot fill its disk", r.sc.Engine)
		}
		if err := d.DiskFull(ctx, true); err != nil {
			return err
		}
		sleepCtx(ctx, f.Duration.D())
		return d.DiskFull(context.WithoutCancel(ctx), false)
	case "command":
		c, ok := r.eng.(engines.Commander)
		if !ok {
			return fmt.Errorf("engine %s takes no commands", r.sc.Engine)
		}
		_, err := c.Command(ctx, f.Command...)
		return err
	case "failover":
		fo, ok := r.eng.(engines.FailoverTarget)
		if !ok {
			return fmt.Errorf("engine %s cannot fail over", r.sc.Engine)
		}
		err := fo.Failover(ctx)
		ws := r.activeWindows()
		ws[len(ws)-1].endNs.Store(r.since()) // the replica is primary
		return err
	case "consumer-crash", "consumer-pause", "subscriber-offline", "slow-consumer":
		r.consumerFaults[f.Consumer] <- f
		return nil
	}
	return fmt.Errorf("fault %q not supported", f.Kind)
}

func (r *run) result(s *sampler, producersDoneAt time.Duration, interrupted bool) (*results.Result, error) {
	sc := r.sc
	scJSON, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	totals, lost := r.ledger.Close(100)
	host, _ := os.Hostname()
	res := &results.Result{
		SchemaVersion: results.SchemaVersion,
		Tool:          "qbench " + Version,
		RunID:         r.opts.RunID,
		StartedAt:     r.started.UTC(),
		Scenario:      scJSON,
		Machine:       results.Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version(), Hostname: host},
		Series:        s.series,
		Histograms:    map[string]string{},
		Interrupted:   interrupted,
	}
	res.Engine = results.Engine{Name: sc.Engine, Design: sc.Design}
	if fr, ok := r.eng.(engines.FactReporter); ok {
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		f := fr.Facts(fctx)
		cancel()
		res.Engine = results.Engine{Name: sc.Engine, Design: sc.Design, Version: f.Version, Address: f.Address, Settings: f.Settings, Stats: f.Stats}
	}
	measured := map[string]*hdrhistogram.Histogram{}
	var dropped int64
	for _, k := range kinds {
		measured[k] = results.NewHistogram()
	}
	for _, rec := range append(append([]*recorder(nil), r.producerRecs...), r.consumerRecs...) {
		rec.mu.Lock()
		for _, k := range kinds {
			dropped += measured[k].Merge(rec.measured[k])
		}
		dropped += rec.dropped
		rec.mu.Unlock()
	}
	res.Summary.Latency = map[string]results.Latency{}
	for _, k := range kinds {
		res.Summary.Latency[k] = results.Summarise(measured[k])
		enc, err := results.EncodeHistogram(measured[k])
		if err != nil {
			return nil, fmt.Errorf("encoding %s histogram: %w", k, err)
		}
		res.Histograms[k] = enc
	}
	window := producersDoneAt - sc.Warmup.D()
	if window <= 0 {
		window = producersDoneAt
	}
	res.Summary.MeasuredSeconds = window.Seconds()
	if window > 0 {
		res.Summary.ProduceRate = float64(res.Summary.Latency[KindProduce].Count) / window.Seconds()
		res.Summary.DeliverRate = float64(res.Summary.Latency[KindE2E].Count) / window.Seconds()
	}
	if !sc.Rate.Max {
		res.Summary.OfferedRate = sc.Rate.PerSecond
	}
	res.Summary.LagMax, res.Summary.EngineLagMax = s.lagMax, s.engineLagMax
	res.Summary.Ledger = results.Ledger(totals)
	res.Summary.ProduceErrors = r.produceErrs.Load()
	res.Summary.Unsent = r.unsent.Load()
	res.Summary.ConsumeErrors = r.consumeErrs.Load()
	res.Summary.HistogramDropped = dropped + s.dropped
	res.Faults = r.faultWindows(s.series)
	for _, m := range lost {
		res.Lost = append(res.Lost, results.MessageID{Group: m.Group, Producer: m.Producer, Seq: m.Seq})
	}
	for k, n := range r.errs {
		res.Errors = append(res.Errors, results.ErrorCount{Where: k[0], Message: k[1], Count: n})
	}
	sort.Slice(res.Errors, func(i, j int) bool { return res.Errors[i].Count > res.Errors[j].Count })
	if n := r.foreign.Load(); n > 0 {
		r.opts.Logf("ignored %d messages without this run's stamp", n)
	}
	return res, nil
}

// destructive says whether a fault can destroy messages (as opposed to delaying them), which
// decides where a lost message is charged when several faults could have cost it.
func destructive(f scenarios.Fault) bool {
	switch f.Kind {
	case "server-crash", "power-loss", "failover", "subscriber-offline":
		return true
	case "consumer-crash":
		return f.Point == "before-work"
	}
	return false
}

// faultWindows reports what each fired fault cost.
func (r *run) faultWindows(series []results.Interval) []results.FaultWindow {
	ws := r.activeWindows()
	spans := make([]ledger.Window, len(ws))
	for i, w := range ws {
		spans[i] = ledger.Window{StartNs: w.startNs, EndNs: w.endNs.Load(), Destructive: destructive(w.fault)}
	}
	costs := r.ledger.Attribute(spans)
	out := make([]results.FaultWindow, len(ws))
	for i, w := range ws {
		until := int64(math.MaxInt64)
		if i+1 < len(ws) {
			until = ws[i+1].startNs
		}
		fw := results.FaultWindow{
			Kind: w.fault.Kind, Target: "server", StartNs: w.startNs, EndNs: spans[i].EndNs,
			Lost: costs[i].Lost, Duplicates: costs[i].Duplicates, ProduceErrors: w.produceErrs.Load(),
			RecoverWriteNs: -1, RecoverReadNs: -1,
		}
		if strings.HasPrefix(w.fault.Kind, "consumer") || w.fault.Kind == "subscriber-offline" || w.fault.Kind == "slow-consumer" {
			fw.Target = fmt.Sprintf("consumer %d", w.fault.Consumer)
		}
		if w.err != nil {
			fw.Error = w.err.Error()
		}
		if t := w.firstWrite.Load(); t > 0 {
			fw.RecoverWriteNs = t - spans[i].EndNs
		}
		if t := w.firstRead.Load(); t > 0 {
			fw.RecoverReadNs = t - spans[i].EndNs
		}
		for _, iv := range series {
			if iv.StartNs+int64(time.Second) > w.startNs && iv.StartNs < until {
				fw.LagPeak = max(fw.LagPeak, iv.Lag)
			}
		}
		out[i] = fw
	}
	return out
}
