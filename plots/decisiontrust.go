package plots

import (
	"fmt"
	"strings"

	"qbench/results"
)

// decisionTrust is what the decision table adds to a row beside its figures: the run's trust
// verdict with its flags' texts, the capacity figures (unsent, achieved of offered, the knee)
// and, with an objective, whether the run met it and what a message cost.
type decisionTrust struct {
	// Verdict is "ok", or WarnSign + " flagged: " + the suspect codes; Notes the note codes
	// ("in-process"), which qualify the figures without making them doubtful.
	Verdict, Notes string
	Flagged        bool
	// FlagTexts are every flag's plain words ("code: text"), for the cell's tooltip and the
	// footnote under the table.
	FlagTexts []string
	Unsent    int64
	// Achieved is acknowledged of offered messages per second ("97%"; "—" in a closed loop).
	Achieved string
	// Knee is where a profiled run first broke its knee objective, or that it never did.
	Knee string
	// SLO is "meets" or "misses" (empty without an objective); Missed the objectives broken.
	SLO    string
	Missed []string
	Cost   string
	// Rank is the run's place among those meeting every objective, cheapest first (0: not ranked).
	Rank int
}

// annotateDecision fills each row's trust verdict, capacity figures and, given objectives,
// the met/missed state, cost per message and rank.
func annotateDecision(rows []decisionRow, runs []reportRun, slo SLO) {
	rank := map[string]int{}
	if slo.Set() {
		var rs []Run
		for _, rr := range runs {
			rs = append(rs, Run{Label: rr.Label, Result: rr.R})
		}
		for i, r := range slo.Rank(rs) {
			rank[r.Label] = i + 1
		}
	}
	for i := range rows {
		r := runs[i].R
		t := trustOf(r)
		d := &rows[i].decisionTrust
		d.Verdict, d.Notes, d.Flagged = verdictText(t)
		for _, f := range t.Flags {
			d.FlagTexts = append(d.FlagTexts, flagLine(f))
		}
		d.Unsent = r.Summary.Unsent
		d.Achieved = achievedOfOffered(r.Summary)
		d.Knee = kneeText(r.Summary.Knee, results.KneeRate(r))
		d.Cost = costOf(r).String()
		if slo.Set() {
			ok, missed := slo.Meets(r)
			d.SLO, d.Missed = "misses", missed
			if ok {
				d.SLO, d.Rank = "meets", rank[runs[i].Label]
			}
		}
	}
}

// flagLine is a flag as the report lists it: its code, then its text (which may already begin
// with the code in words: "unsent: 42361 of ...").
func flagLine(f results.Flag) string {
	if strings.HasPrefix(f.Text, strings.ReplaceAll(f.Code, "-", " ")+":") {
		return f.Text
	}
	return f.Code + ": " + f.Text
}

// verdictText is a verdict as the tables print it: "ok", or the sign, "flagged:" and the
// suspect codes; the note codes apart.
func verdictText(t results.Trust) (verdict, notes string, flagged bool) {
	var ns []string
	seen := map[string]bool{}
	for _, f := range t.Flags {
		if f.Severity != results.SeveritySuspect && !seen[f.Code] {
			seen[f.Code] = true
			ns = append(ns, f.Code)
		}
	}
	notes = strings.Join(ns, ", ")
	if t.Trusted() {
		return "ok", notes, false
	}
	return WarnSign + " flagged: " + suspectCodes(t), notes, true
}

// achievedOfOffered is the acknowledged rate as a share of the offered one.
func achievedOfOffered(s results.Summary) string {
	if s.OfferedRate <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*s.ProduceRate/s.OfferedRate)
}

// kneeText says where a profiled run first broke its knee objective, or the highest offered
// rate at which it held it throughout (rate: results.KneeRate).
func kneeText(k *results.Knee, rate float64) string {
	switch {
	case k == nil:
		return "—"
	case !k.Reached && rate > 0:
		return fmt.Sprintf("not reached (held to %.0f/s)", rate)
	case !k.Reached:
		return "not reached"
	}
	return fmt.Sprintf("%.0f/s offered (at %.1fs)", k.OfferedRate, k.AtSeconds)
}

// anyKnee says whether the decision table needs its knee column.
func anyKnee(rows []decisionRow) bool {
	for _, r := range rows {
		if r.Knee != "—" {
			return true
		}
	}
	return false
}
