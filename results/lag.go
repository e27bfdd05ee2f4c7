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
