package results_test

import (
	"strings"
	"testing"

	"qbench/results"
	"qbench/results/resultstest"
)

// The summary tells a backlog from a loss: queued is printed on its own, next to lost, and said to
// be a backlog when there is one.
func TestSummaryPrintsQueuedApartFromLost(t *testing.T) {
	cases := []struct {
		name         string
		queued, lost int64
		want         []string
		notWant      string
	}{
		{name: "backlog", queued: 4680, want: []string{
			"queued 4680 (still in the engine at the end: a backlog, not a loss), lost 0,"}},
		{name: "loss", lost: 3, want: []string{"queued 0, lost 3,"}, notWant: "backlog"},
		{name: "both", queued: 10, lost: 2, want: []string{"queued 10 (still", "a loss), lost 2,"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := resultstest.Make(resultstest.Options{Seed: 1, Seconds: 2})
			r.Summary.Ledger.Queued, r.Summary.Ledger.Lost = c.queued, c.lost
			var b strings.Builder
			if err := results.WriteSummary(&b, r); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, b.String())
				}
			}
			if c.notWant != "" && strings.Contains(b.String(), c.notWant) {
				t.Errorf("summary says %q with nothing queued:\n%s", c.notWant, b.String())
			}
		})
	}
}
