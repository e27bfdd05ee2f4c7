package bench

import (
	"context"
	"fmt"
	"math"
	"qbench/bench/ledger"
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
	"sort"
	"sync/atomic"
	"time"
)

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
			if t, _ := f.Kind.Traits(); t.EndsOnRecovery {
				w.endNs.Store(math.MaxInt64) // until the server answers again
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
	if t, _ := f.Kind.Traits(); t.ConsumerSide {
		r.consumerFaults[f.Consumer] <- f
		return nil
	}
	switch f.Kind {
	case scenarios.FaultStall:
		s, ok := r.eng.(engines.Staller)
		if !ok {
			return fmt.Errorf("engine %s cannot stall", r.sc.Engine)
		}
		return s.Stall(ctx, f.Duration.D())
	case scenarios.FaultServerCrash, scenarios.FaultPowerLoss:
		c, ok := r.eng.(engines.Crasher)
		if !ok {
			return fmt.Errorf("engine %s cannot crash its server", r.sc.Engine)
		}
		kind := engines.ProcessCrash
		if f.Kind == scenarios.FaultPowerLoss {
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
	case scenarios.FaultDiskFull:
		d, ok := r.eng.(engines.DiskFiller)
		if !ok {
			return fmt.Errorf("engine %s cannot fill its disk", r.sc.Engine)
		}
		if err := d.DiskFull(ctx, true); err != nil {
			return err
		}
		sleepCtx(ctx, f.Duration.D())
		return d.DiskFull(context.WithoutCancel(ctx), false)
	case scenarios.FaultCommand:
		c, ok := r.eng.(engines.Commander)
		if !ok {
			return fmt.Errorf("engine %s takes no commands", r.sc.Engine)
		}
		_, err := c.Command(ctx, f.Command...)
		return err
	case scenarios.FaultFailover:
		fo, ok := r.eng.(engines.FailoverTarget)
		if !ok {
			return fmt.Errorf("engine %s cannot fail over", r.sc.Engine)
		}
		err := fo.Failover(ctx)
		ws := r.activeWindows()
		ws[len(ws)-1].endNs.Store(r.since()) // the replica is primary
		return err
	}
	return fmt.Errorf("fault %q not supported", f.Kind)
}

// faultWindows reports what each fired fault cost.
func (r *run) faultWindows(series []results.Interval) []results.FaultWindow {
	ws := r.activeWindows()
	spans := make([]ledger.Window, len(ws))
	for i, w := range ws {
		spans[i] = ledger.Window{StartNs: w.startNs, EndNs: w.endNs.Load(), Destructive: w.fault.Destructive()}
	}
	costs := r.ledger.Attribute(spans)
	out := make([]results.FaultWindow, len(ws))
	for i, w := range ws {
		until := int64(math.MaxInt64)
		if i+1 < len(ws) {
			until = ws[i+1].startNs
		}
		fw := results.FaultWindow{
			Kind: string(w.fault.Kind), Target: "server", StartNs: w.startNs, EndNs: spans[i].EndNs,
			Lost: costs[i].Lost, Duplicates: costs[i].Duplicates, ProduceErrors: w.produceErrs.Load(),
			RecoverWriteNs: -1, RecoverReadNs: -1, LastDurableNs: costs[i].LastDurableNs,
		}
		if costs[i].OldestLostNs >= 0 {
			fw.LossWindowNs = max(0, w.startNs-costs[i].OldestLostNs)
		}
		if t, _ := w.fault.Kind.Traits(); t.ConsumerSide {
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
