package bench

import (
	"qbench/results"
	"qbench/scenarios"
	"time"
)

// ShapeFor is the scenario's rate profile as segments (nil without a profile: a constant rate).
func ShapeFor(sc *scenarios.Scenario) *Shape {
	p := sc.Profile
	switch {
	case p.IsRamp():
		return NewShape([]Segment{{Len: sc.Duration.D(), From: p.Ramp.From, To: p.Ramp.To}}, false)
	case p.IsSteps():
		segs := make([]Segment, len(p.Steps))
		for i, s := range p.Steps {
			segs[i] = Segment{Len: s.For.D(), From: s.Rate, To: s.Rate}
		}
		return NewShape(segs, false)
	case p.IsBurst():
		b := p.Burst
		return NewShape([]Segment{
			{Len: b.Every.D() - b.For.D(), From: b.Base, To: b.Base},
			{Len: b.For.D(), From: b.Peak, To: b.Peak},
		}, true)
	}
	return nil
}

// producerPacer is producer id's schedule under the scenario's rate, profile and arrival process.
func producerPacer(sc *scenarios.Scenario, shape *Shape, id int) Pacer {
	return NewShapedPacer(sc.Rate.PerSecond, shape, sc.Arrival == "poisson", sc.Seed, id, sc.Producers, sc.Duration.D())
}

// offeredRate is the mean offered rate over the measured window (warm-up to the end), the window
// the produce rate is measured over: the rate, or the profile's mean there.
func offeredRate(sc *scenarios.Scenario) float64 {
	if sc.Rate.Max {
		return 0
	}
	shape := ShapeFor(sc)
	if shape == nil {
		return sc.Rate.PerSecond
	}
	from, to := sc.Warmup.D(), sc.Duration.D()
	if to <= from {
		return shape.Mean(to)
	}
	return (shape.Count(to) - shape.Count(from)) / (to - from).Seconds()
}

// fillOffered sets each interval's offered count from the schedules themselves (pure functions
// of time), so the series shows what was asked beside what was achieved.
func fillOffered(sc *scenarios.Scenario, series []results.Interval) {
	if sc.Rate.Max || len(series) == 0 {
		return
	}
	shape := ShapeFor(sc)
	pacers := make([]Pacer, sc.Producers)
	for id := range pacers {
		pacers[id] = producerPacer(sc, shape, id)
	}
	before := func(t time.Duration) int64 {
		var n int64
		for _, p := range pacers {
			n += int64(p.CountBefore(t))
		}
		return n
	}
	prev := before(time.Duration(series[0].StartNs))
	for i := range series {
		end := series[i].StartNs + int64(time.Second)
		if i+1 < len(series) {
			end = series[i+1].StartNs
		}
		cur := before(time.Duration(end))
		series[i].Offered = cur - prev
		prev = cur
	}
}

// reserveLedger sizes the ledger's books for the schedule before the run starts (ledger.Reserve):
// each producer's messages up to the schedule's end, for the producers this process runs, and
// for every producer when it consumes (its consumers mark any producer's messages). A rate: max
// run has no schedule, and a consume-only run has none of its own (its scenario names no rate:
// a pacer built from it would count billions of messages); their books grow.
func (r *run) reserveLedger() {
	sc := r.sc
	if sc.Rate.Max || !sc.Produces() {
		return
	}
	shape := ShapeFor(sc)
	for p := range sc.Producers {
		if !r.localProducer(p) && !sc.Consumes() {
			continue
		}
		pc := producerPacer(sc, shape, p)
		pc.Duration = r.scheduleEnd
		r.ledger.Reserve(p, pc.CountBefore(r.scheduleEnd))
	}
}
