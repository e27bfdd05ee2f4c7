package results

import (
	"strings"
	"testing"
)

// The timer warning fires when send delay p99 is above 200 us and the pacer's timer lateness p99
// is at least half of it, and only then.
func TestTimerWarning(t *testing.T) {
	late := func(p99, max int64) *PacerFigure { return &PacerFigure{Count: 1000, P50: 20_000, P99: p99, Max: max} }
	cases := []struct {
		name      string
		sendDelay int64
		timers    *PacerFigure
		want      []string
	}{
		{"the VM's halting vCPUs: timers explain the send delay", 3_000_000, late(2_500_000, 4_800_000),
			[]string{"the machine's timers woke qbench's producers late (p99 2.50ms, max 4.80ms) beyond the pacer's lead (up to 150us): send delay p99 3.00ms is mostly the machine's scheduling"}},
		{"exactly half", 400_000, late(200_000, 300_000), []string{"the machine's timers woke"}},
		{"timers under half of the send delay: qbench's own lateness", 3_000_000, late(1_499_999, 2_000_000), nil},
		{"send delay at the threshold is not counted", 200_000, late(200_000, 200_000), nil},
		{"send delay just above the threshold", 200_001, late(150_000, 180_000), []string{"the machine's timers woke"}},
		{"late timers but a small send delay: the lead absorbed them", 150_000, late(140_000, 900_000), nil},
		{"no timer figures (closed loop, or an older result)", 3_000_000, nil, nil},
		{"qbench short of CPU: its own warning, not this one", 3_000_000, late(2_500_000, 4_800_000), []string{"qbench used 85% of the machine's CPU"}},
		{"no sleeps counted", 3_000_000, &PacerFigure{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := quietSummary()
			s.Latency["produce"] = Latency{P99: 100_000_000} // keep the send-delay share rule quiet
			s.Latency["send_delay"] = Latency{P99: c.sendDelay}
			s.Generator.TimerWakeLate, s.Generator.PacerLeadP50Ns, s.Generator.PacerLeadMaxNs = c.timers, 60_000, 150_000
			if strings.HasPrefix(c.name, "qbench short of CPU") {
				s.Generator.CPUShare = 0.85
			}
			assertWarnings(t, Warnings(s), c.want)
		})
	}
}

// A summary read again makes the timer warning anew rather than keeping the old one twice.
func TestTimerWarningIsARule(t *testing.T) {
	s := quietSummary()
	s.Latency["produce"] = Latency{P99: 100_000_000}
	s.Latency["send_delay"] = Latency{P99: 3_000_000}
	s.Generator.TimerWakeLate = &PacerFigure{Count: 10, P50: 1, P99: 2_000_000, Max: 3_000_000}
	w := Warnings(s)
	if len(w) != 1 || !ruleWarning(w[0]) {
		t.Fatalf("warnings %q: want one, made by a rule", w)
	}
	if again := Rewarn(s, w); len(again) != 1 {
		t.Fatalf("rewarned %q", again)
	}
}

// The summary prints the pacer's line only when the timers were late enough to matter.
func TestSummaryPrintsPacerLine(t *testing.T) {
	for _, c := range []struct {
		p99  int64
		want bool
	}{{PacerLineNs - 1, false}, {PacerLineNs, true}, {2_000_000, true}} {
		g := Generator{TimerWakeLate: &PacerFigure{Count: 5000, P50: 30_000, P99: c.p99, Max: 4_000_000},
			PacerSpin: &PacerFigure{Count: 5000, P50: 10_000, P99: 90_000, Max: 150_000}, PacerLeadP50Ns: 25_000, PacerLeadMaxNs: 100_000}
		var b strings.Builder
		writePacer(&b, g)
		if got := strings.HasPrefix(b.String(), "pacer: the machine's timers woke producers late by p50 30us"); got != c.want {
			t.Errorf("p99 %d: printed %q, want a line %v", c.p99, b.String(), c.want)
		}
		if c.want && !strings.Contains(b.String(), "over 5000 sleeps, against a lead of p50 25us, max 100us; spun p50 10us, p99 90us") {
			t.Errorf("line %q", b.String())
		}
	}
	var b strings.Builder
	writePacer(&b, Generator{})
	if b.Len() != 0 {
		t.Errorf("no figures, printed %q", b.String())
	}
}

// Merged runs count their sleeps together and keep each percentile's and the lead's largest.
func TestMergePacerFigures(t *testing.T) {
	mk := func(id string, g Generator) *Result {
		s := quietSummary()
		s.Generator = g
		return &Result{SchemaVersion: SchemaVersion, RunID: id, Scenario: []byte(`{"name":"x"}`), Summary: s, Histograms: map[string]string{}}
	}
	a := mk("a", Generator{TimerWakeLate: &PacerFigure{Count: 10, P50: 5, P99: 90, Max: 100}, PacerLeadP50Ns: 7, PacerLeadMaxNs: 20})
	b := mk("b", Generator{TimerWakeLate: &PacerFigure{Count: 30, P50: 8, P99: 50, Max: 400}, PacerSpin: &PacerFigure{Count: 30, P50: 1, P99: 2, Max: 3}, PacerLeadP50Ns: 3, PacerLeadMaxNs: 40})
	m, err := Merge([]*Result{a, b}, MergeOptions{Mode: MergeRepetitions})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Summary.Generator
	if g.TimerWakeLate == nil || *g.TimerWakeLate != (PacerFigure{Count: 40, P50: 8, P99: 90, Max: 400}) ||
		g.PacerSpin == nil || *g.PacerSpin != (PacerFigure{Count: 30, P50: 1, P99: 2, Max: 3}) || g.CoarseWakeLate != nil ||
		g.PacerLeadP50Ns != 7 || g.PacerLeadMaxNs != 40 {
		t.Fatalf("merged %+v, timers %+v, spin %+v", g, g.TimerWakeLate, g.PacerSpin)
	}
	if a.Summary.Generator.TimerWakeLate.Count != 10 || b.Summary.Generator.PacerSpin.Count != 30 {
		t.Fatal("merge changed its inputs")
	}
}
