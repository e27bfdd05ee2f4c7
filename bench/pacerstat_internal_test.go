package bench

import (
	"testing"
	"time"

	"qbench/results"
)

// Recording a sleep allocates nothing (it runs before every paced message), sleeps before the
// warm-up's end are left out, values out of range are clamped, and the figures read back within the histograms' resolution.
func TestPacerStatsRecordAndFill(t *testing.T) {
	now := time.Now()
	p := newPacerStats()
	p.from = now
	if a := testing.AllocsPerRun(100, func() {
		p.precise(now, 30*time.Microsecond, 10*time.Microsecond, 5*time.Microsecond)
		p.coarse(now, 40*time.Microsecond)
	}); a != 0 {
		t.Errorf("%.1f allocations per recorded sleep, want 0", a)
	}
	p.precise(now.Add(-time.Nanosecond), time.Hour, time.Hour, time.Hour) // in the warm-up: left out
	p.precise(now, -time.Microsecond, 0, 0)                               // a clock read out of order: 0
	p.precise(now, 3*time.Millisecond, 200*time.Microsecond, 0)
	var nilStats *pacerStats
	nilStats.precise(now, time.Second, 0, 0) // no stats (a segment's start): a no-op
	var g results.Generator
	fillPacer(&g, []*pacerStats{nil, p})
	l := g.TimerWakeLate
	if l == nil || l.Count != 103 || l.P50 < 29_000 || l.P50 > 31_000 || l.P50 > l.P99 || l.Max < 2_910_000 || l.Max > 3_090_000 {
		t.Fatalf("timer_wake_late %+v", l)
	}
	if g.PacerSpin == nil || g.PacerSpin.Count != 103 || g.CoarseWakeLate == nil || g.CoarseWakeLate.Count != 101 {
		t.Fatalf("spin %+v, coarse %+v", g.PacerSpin, g.CoarseWakeLate)
	}
	if g.PacerLeadP50Ns < 9_700 || g.PacerLeadP50Ns > 10_300 || g.PacerLeadMaxNs < 194_000 || g.PacerLeadMaxNs > 206_000 {
		t.Fatalf("lead p50 %d, max %d", g.PacerLeadP50Ns, g.PacerLeadMaxNs)
	}
	g = results.Generator{}
	fillPacer(&g, []*pacerStats{newPacerStats()})
	if g.TimerWakeLate != nil || g.PacerSpin != nil || g.CoarseWakeLate != nil || g.PacerLeadMaxNs != 0 {
		t.Fatalf("no sleeps: %+v", g)
	}
}
