package results

import (
	"bytes"
	"strings"
	"testing"
)

// Half a run says what it cannot know instead of printing 0 for it, and a backlog that was not
// drained says so.
func TestSummaryRoleAndBacklogLines(t *testing.T) {
	cases := []struct {
		name      string
		s         Summary
		want, not []string
	}{
		{"produce-only", Summary{Role: "produce", Ledger: Ledger{Sent: 10, Acked: 10}},
			[]string{"sent 10, acked 10, failed 0 (a produce-only run: delivered, queued, lost and duplicates are the consuming run's to know)"},
			[]string{"delivered 0", "lost 0"}},
		{"consume-only", Summary{Role: "consume", Ledger: Ledger{Delivered: 7, Foreign: 2}},
			[]string{"offered nothing (a consume-only run)", "delivered 7, duplicates 0, foreign 2 (a consume-only run"},
			[]string{"sent 0", "lost 0"}},
		{"drained", Summary{Backlog: &Backlog{Producers: "stop", FilledMessages: 500, FillSeconds: 1, Drained: true, DrainSeconds: 0.5, LagSource: "engine", DrainRate: 1000, NetDrainRate: 1000}},
			[]string{"backlog: filled 500 messages in 1.0 s with consumers off; producers stopped", "drained to zero lag (engine) in 0.50 s"},
			[]string{"NOT drained"}},
		{"not drained", Summary{Backlog: &Backlog{Producers: "keep", FilledMessages: 500, FillSeconds: 1, DrainSeconds: 2}},
			[]string{"NOT drained within the run: lag still above zero when consumers stopped after 2.00 s"},
			[]string{"drained to zero lag"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSummary(&buf, &Result{Summary: c.s}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("summary lacks %q:\n%s", w, out)
				}
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("summary has %q:\n%s", n, out)
				}
			}
		})
	}
}
