package results

import "time"

// Total is the engine's backlog plus pending: what it still has to hand over or see acknowledged.
func (l *EngineLag) Total() int64 {
	if l == nil {
		return 0
	}
	return l.Backlog + l.Pending
}

// LagPeaks is the largest load generator's and engine's lag read in [fromNs, toNs]: from every
// per-second interval that overlaps it (an interval's reading is taken at its end, but a
// backlog inside it is what it reports) and from every sub-second sample inside it. The
// summary's maxima are LagPeaks over the whole run; a fault's lag peak is LagPeaks over its
// window.
func LagPeaks(series []Interval, samples []LagSample, fromNs, toNs int64) (gen, eng int64) {
	for _, iv := range series {
		if iv.StartNs+int64(time.Second) > fromNs && iv.StartNs <= toNs {
			gen = max(gen, iv.Lag)
			eng = max(eng, iv.EngineLag.Total())
		}
	}
	for _, s := range samples {
		if s.AtNs >= fromNs && s.AtNs <= toNs {
			gen = max(gen, s.Lag)
			eng = max(eng, s.EngineLag.Total())
		}
	}
	return gen, eng
}

// GroupLagPeaks is each receiving group's largest lag over the per-second series and the
// sub-second samples, and its last per-second reading (the final interval is read once consumers
// have stopped: what the group never received). Nil without per-group readings.
func GroupLagPeaks(series []Interval, samples []LagSample) (peak, last []int64) {
	note := func(gl []int64) {
		for len(peak) < len(gl) {
			peak = append(peak, 0)
		}
		for g, v := range gl {
			peak[g] = max(peak[g], v)
		}
	}
	for _, iv := range series {
		note(iv.GroupLag)
		if iv.GroupLag != nil {
			last = iv.GroupLag
		}
	}
	for _, s := range samples {
		note(s.GroupLag)
	}
	return peak, last
}
