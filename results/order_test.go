package results

import (
	"strings"
	"testing"
)

// The summary text says reordered n/a with the reason when nothing was promised, the count with
// its scope when it counted any, and nothing when it is 0; poison retries and dead letters get a
// line of their own.
func TestSummaryPrintsOrderAndPoison(t *testing.T) {
	cases := []struct {
		name  string
		s     Summary
		want  []string
		never []string
	}{
		{"not promised", Summary{ReorderNotPromised: "2 consumers of one group compete for one queue"},
			[]string{"reordered n/a (2 consumers of one group compete for one queue)"}, []string{"poison"}},
		{"reordered in scope", Summary{ReorderScope: "per producer and partition", Ledger: Ledger{Reordered: 3}},
			[]string{"reordered 3 (broke the order the engine owes per producer and partition)"}, nil},
		{"in order", Summary{ReorderScope: "per producer"}, nil, []string{"reordered", "poison"}},
		{"produce-only run", Summary{Role: "produce", ReorderNotPromised: "x"}, nil, []string{"reordered"}},
		{"poison", Summary{ReorderScope: "per producer", DeadLettered: 12, Ledger: Ledger{PoisonRetries: 49, Duplicates: 0}},
			[]string{"poison retries 49 (", "dead-lettered 12 (", "duplicates 0"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteSummary(&b, &Result{Summary: c.s}); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range c.never {
				if strings.Contains(b.String(), w) {
					t.Errorf("summary has %q:\n%s", w, b.String())
				}
			}
		})
	}
	if got := ReorderedText(Summary{ReorderNotPromised: "x", Ledger: Ledger{Reordered: 5}}); got != "n/a" {
		t.Errorf("ReorderedText not promised = %q, want n/a", got)
	}
	if got := ReorderedText(Summary{ReorderScope: "per producer", Ledger: Ledger{Reordered: 5}}); got != "5" {
		t.Errorf("ReorderedText = %q, want 5", got)
	}
}

// A closed loop whose window set its rate is a warning, read again by Rewarn as a rule's.
func TestInFlightBoundWarns(t *testing.T) {
	s := Summary{Generator: Generator{InFlightBound: "rate set by qbench's in-flight limit (8 batches of 16 per producer)"}}
	ws := Warnings(s)
	if len(ws) != 1 || !strings.Contains(ws[0], s.Generator.InFlightBound) || !ruleWarning(ws[0]) {
		t.Fatalf("warnings %q: want one rule warning naming the bound", ws)
	}
	if again := Rewarn(s, ws); len(again) != 1 {
		t.Fatalf("Rewarn %q: want the one warning, once", again)
	}
	if ws := Warnings(Summary{}); len(ws) != 0 {
		t.Fatalf("warnings %q without a bound", ws)
	}
}
