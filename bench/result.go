package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"qbench/engines"
	"qbench/results"
	"qbench/scenarios"
	"runtime"
	"slices"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func (r *run) result(s *sampler, producersDoneAt time.Duration, interrupted bool) (*results.Result, error) {
	sc := r.sc
	s.seriesBack()
	scJSON, err := json.Marshal(sc)
	var scFixed []string
	if err != nil {
		// A NaN the loader let through must not lose a finished run: record it as 0, and say so.
		if scFixed = results.Finite(sc); len(scFixed) == 0 {
			return nil, err
		}
		if scJSON, err = json.Marshal(sc); err != nil {
			return nil, err
		}
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
		Bins:          results.BuildLatencySeriesFrom(int64(r.binWidth), s.bins.each),
		Histograms:    map[string]string{},
		Interrupted:   interrupted,
	}
	res.Engine = results.Engine{Name: sc.Engine, Design: sc.Design}
	if fr, ok := r.eng.(engines.FactReporter); ok {
		timeout := 5 * time.Second
		if interrupted {
			timeout = r.cleanupLeft() // Ctrl-C: a stalled server must not hold the exit
		}
		fctx, cancel := context.WithTimeout(context.Background(), timeout)
		f := fr.Facts(fctx)
		cancel()
		res.Engine = results.Engine{Name: sc.Engine, Design: sc.Design, Version: f.Version, Address: f.Address, Settings: f.Settings, Stats: f.Stats}
	}
	for k, v := range r.procs.stats(r.procEnd) {
		if res.Engine.Stats == nil {
			res.Engine.Stats = map[string]int64{}
		}
		res.Engine.Stats[k] = v
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
		res.Summary.ProduceBytesRate = float64(r.measuredAckedBytes.Load()) / window.Seconds()
		res.Summary.DeliverRate = float64(r.window.deliveries) / window.Seconds()
		res.Summary.DeliverRatePerGroup = res.Summary.DeliverRate / float64(max(r.groups, 1))
		var bytes, deliveries int64
		for _, iv := range s.series {
			bytes, deliveries = bytes+iv.DeliveredBytes, deliveries+iv.Deliveries
		}
		if deliveries > 0 {
			res.Summary.DeliverBytesRate = res.Summary.DeliverRate * float64(bytes) / float64(deliveries)
		}
	}
	res.Summary.Groups = max(r.groups, 1)
	res.Summary.DrainSeconds = r.window.drain.Seconds()
	res.Summary.SweepSeconds = r.window.sweep
	res.Summary.OfferedRate = offeredRate(sc)
	offered := *sc
	offered.Duration = scenarios.Duration(r.scheduleEnd) // a backlog's fill is offered too
	fillOffered(&offered, res.Series)
	if sc.Knee != "" {
		k, err := results.FindKnee(sc.Knee, res.Series)
		if err != nil {
			return nil, err
		}
		res.Summary.Knee = k
	}
	res.LagSamples = s.lagSamples
	res.Summary.LagMax, res.Summary.EngineLagMax = results.LagPeaks(s.series, s.lagSamples, math.MinInt64, math.MaxInt64)
	res.Summary.PerShard = r.perShard(&s.shardLags)
	res.Summary.PerConsumer = r.perConsumer()
	res.Summary.PerGroup = r.perGroup(s)
	res.Summary.Ledger = results.Ledger(totals)
	res.Summary.ReorderScope, res.Summary.ReorderNotPromised = r.reorderScope, r.reorderNotPromised
	res.Summary.DeadLettered = res.Engine.Stats["dead_letters"]
	if res.Summary.DeadLettered > 0 {
		res.DeadLetters = r.deadLetters(interrupted)
	}
	res.Summary.ProduceErrors = r.produceErrs.Load()
	res.Summary.Unsent = r.unsent.Load()
	res.Summary.Generator.InFlight, res.Summary.Generator.InFlightFull = sc.InFlight, r.inFlightFull.Load()
	res.Summary.Generator.LateHeldByEngine, res.Summary.Generator.LateOwn = r.lateHeld.Load(), r.lateOwn.Load()
	res.Summary.Generator.InFlightBound = inFlightBound(sc)
	res.Summary.ConsumeErrors = r.consumeErrs.Load()
	res.Summary.HistogramDropped = dropped + s.dropped
	switch {
	case !sc.Consumes():
		res.Summary.Role = sc.Role
		res.Summary.NotKnown = []string{"delivered", "deliveries", "queued", "lost", "duplicates", "reordered", "e2e"}
	case !sc.Produces():
		res.Summary.Role = sc.Role
		res.Summary.NotKnown = []string{"sent", "acked", "failed", "queued", "lost", "phantom", "delivered_unacked", "reordered"}
		if r.seg == nil { // a segment's stamps are on the shared clock (segment.go)
			res.Summary.NotKnown = append(res.Summary.NotKnown, "e2e")
		}
	}
	if r.reorderNotPromised != "" && !slices.Contains(res.Summary.NotKnown, "reordered") {
		res.Summary.NotKnown = append(res.Summary.NotKnown, "reordered") // n/a: nothing was owed
	}
	if r.seg != nil {
		for _, f := range results.SegmentNotKnown {
			if !slices.Contains(res.Summary.NotKnown, f) {
				res.Summary.NotKnown = append(res.Summary.NotKnown, f)
			}
		}
	}
	if r.backlog != nil {
		res.Summary.Backlog = r.backlogResult(int64(r.window.producersDone + r.window.drain))
	}
	res.Faults = r.faultWindows(s.series, s.lagSamples)
	res.Engine.Died = r.died // read by faultWindows
	for _, m := range lost {
		res.Lost = append(res.Lost, results.MessageID{Group: m.Group, Producer: m.Producer, Seq: m.Seq})
	}
	for k, n := range r.errs {
		res.Errors = append(res.Errors, results.ErrorCount{Where: k[0], Message: k[1], Count: n})
	}
	sort.Slice(res.Errors, func(i, j int) bool { return res.Errors[i].Count > res.Errors[j].Count })
	engineCPU, known := res.Engine.Stats["proc_cpu_ns"]
	if !known {
		engineCPU = -1
	}
	res.Summary.MachineLoad = r.cost.fill(&res.Summary.Generator, totals.Sent+totals.Deliveries, r.eng, engineCPU)
	fillPacer(&res.Summary.Generator, r.pacerStats)
	// Last, once every figure they read is in.
	res.Summary.Warnings = append(res.Summary.Warnings, results.Warnings(res.Summary)...)
	if len(scFixed) > 0 {
		res.Summary.Warnings = append(res.Summary.Warnings, "scenario: "+results.NonFiniteWarning(scFixed))
	}
	if n := r.foreign.Load(); n > 0 {
		r.opts.Logf("ignored %d foreign messages (no qbench stamp, or another run's)", n)
	}
	return res, nil
}

// deadLetters lists this run's messages in the engine's dead-letter store (the first
// results.MaxDeadLetters, oldest first), read without consuming them; nil when the engine
// cannot say or the read failed (noted among the run's errors).
func (r *run) deadLetters(interrupted bool) []results.MessageID {
	d, ok := r.eng.(engines.DeadLetterReader)
	if !ok {
		return nil
	}
	timeout := 5 * time.Second
	if interrupted {
		timeout = r.cleanupLeft()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []results.MessageID
	err := d.DeadLetters(ctx, func(p []byte) {
		st, err := DecodeStamp(p)
		if err != nil || st.RunTag != r.tag || len(out) >= results.MaxDeadLetters {
			return // another run's, or not qbench's
		}
		out = append(out, results.MessageID{Producer: int(st.Producer), Seq: st.Seq})
	})
	if err != nil && !errors.Is(err, engines.ErrNothingStored) {
		r.noteErr("dead letters", err)
	}
	return out
}
