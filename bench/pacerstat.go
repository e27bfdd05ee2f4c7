package bench

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// pacerStats is what one producer's pacer saw of the machine's timers (sleep_linux.go): how late
// each sleep woke, how early it asked to be woken (the lead) and how long it then spun to the due
// time, for the sleeps ending after the warm-up. A lateness beyond the lead is send delay the
// machine's scheduling made, which the summary could otherwise not tell from qbench's own.
//
// Only the goroutine holding the producer's pacing lock sleeps, so one producer's sleeps are
// recorded one at a time; the histograms are read once the producer has returned. Recording is
// RecordValue into preallocated histograms: no allocation.
type pacerStats struct {
	// from is when sleeps start to count: the end of the warm-up, as for send delay.
	from                         time.Time
	late, lead, spin, coarseLate *hdrhistogram.Histogram
}

// pacerHistHighest bounds the pacer's histograms: a sleep is at most preciseSleepMax, and a
// wake-up later than this is recorded as this.
const pacerHistHighest = int64(10 * time.Second)

// newPacerHistogram is a histogram for the pacer's times: 1 ns to pacerHistHighest at 2
// significant digits (1%), about 28 KiB, where the latency histograms' 3 digits up to an hour are
// about 270 KiB each: four per producer at that size were a visible share of a short run's
// allocated bytes (BenchmarkRunAllocsPerMessage).
func newPacerHistogram() *hdrhistogram.Histogram { return hdrhistogram.New(1, pacerHistHighest, 2) }

// newPacerStats's from is set by the caller once the run's epoch is known.
func newPacerStats() *pacerStats {
	return &pacerStats{late: newPacerHistogram(), lead: newPacerHistogram(), spin: newPacerHistogram(), coarseLate: newPacerHistogram()}
}

// precise records a precise sleep that woke at woke, late past the time it asked for, having
// asked lead early, and spun spin after.
func (p *pacerStats) precise(woke time.Time, late, lead, spin time.Duration) {
	if p == nil || woke.Before(p.from) {
		return
	}
	recordClamped(p.late, late)
	recordClamped(p.lead, lead)
	recordClamped(p.spin, spin)
}

// coarse records a coarse sleep (no early wake, no spin) that woke at woke, late past its end.
func (p *pacerStats) coarse(woke time.Time, late time.Duration) {
	if p == nil || woke.Before(p.from) {
		return
	}
	recordClamped(p.coarseLate, late)
}

func recordClamped(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(int64(d), 0), pacerHistHighest))
}

// fillPacer merges the producers' pacer figures into g (nil entries are producers not run here).
func fillPacer(g *results.Generator, stats []*pacerStats) {
	late, lead, spin, coarse := newPacerHistogram(), newPacerHistogram(), newPacerHistogram(), newPacerHistogram()
	for _, p := range stats {
		if p == nil {
			continue
		}
		late.Merge(p.late)
		lead.Merge(p.lead)
		spin.Merge(p.spin)
		coarse.Merge(p.coarseLate)
	}
	g.TimerWakeLate, g.PacerSpin, g.CoarseWakeLate = pacerFigure(late), pacerFigure(spin), pacerFigure(coarse)
	if lead.TotalCount() > 0 {
		g.PacerLeadP50Ns, g.PacerLeadMaxNs = results.ValuesAtPercentiles(lead, []float64{50})[0], lead.Max()
	}
}

// pacerFigure is h's count and percentiles; nil when empty.
func pacerFigure(h *hdrhistogram.Histogram) *results.PacerFigure {
	if h.TotalCount() == 0 {
		return nil
	}
	v := results.ValuesAtPercentiles(h, []float64{50, 99})
	return &results.PacerFigure{Count: h.TotalCount(), P50: v[0], P99: v[1], Max: h.Max()}
}
