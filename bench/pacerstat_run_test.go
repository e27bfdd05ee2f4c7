package bench_test

import (
	"encoding/json"
	"strings"
	"testing"

	"qbench/results"
)

// A paced run on the null engine reports the pacer's timer figures: sleeps were counted (at most
// one precise sleep per message claimed, since a sleep never ends before its message is due),
// their percentiles are ordered, the lead stays within the pacer's cap, and the figures are in
// the result file under generator.timer_wake_late. No timing is asserted: how late the timers
// are is the machine's.
func TestNullEngineRunReportsTimerLateness(t *testing.T) {
	res := run(t, scenario(t, `
engine: nullq
design: stream
producers: 2
consumers: 1
rate: 2000
duration: 1s
warmup: 200ms
`))
	g := res.Summary.Generator
	ordered := func(name string, f *results.PacerFigure) {
		t.Helper()
		if f == nil {
			t.Fatalf("no %s figure", name)
		}
		t.Logf("%s %+v", name, *f)
		if f.Count <= 0 || f.P50 < 0 || f.P50 > f.P99 || f.P99 > f.Max {
			t.Fatalf("%s %+v: want count > 0 and 0 <= p50 <= p99 <= max", name, *f)
		}
	}
	ordered("timer_wake_late", g.TimerWakeLate)
	ordered("pacer_spin", g.PacerSpin)
	if g.TimerWakeLate.Count != g.PacerSpin.Count {
		t.Errorf("%d sleeps woke, %d spun: every precise sleep records both", g.TimerWakeLate.Count, g.PacerSpin.Count)
	}
	if sent := res.Summary.Ledger.Sent; g.TimerWakeLate.Count > sent {
		t.Errorf("%d precise sleeps counted after the warm-up for %d messages sent in all", g.TimerWakeLate.Count, sent)
	}
	// The lead is the pacer's estimate, capped at maxAnticipation (200 us).
	if g.PacerLeadP50Ns < 0 || g.PacerLeadP50Ns > g.PacerLeadMaxNs || g.PacerLeadMaxNs > 200_000 {
		t.Errorf("lead p50 %d ns, max %d ns: want 0 <= p50 <= max <= 200 us", g.PacerLeadP50Ns, g.PacerLeadMaxNs)
	}
	raw, err := json.Marshal(res.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"timer_wake_late":{"count":`) {
		t.Errorf("summary JSON has no generator.timer_wake_late: %s", raw)
	}
}
