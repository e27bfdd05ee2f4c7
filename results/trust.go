package results

// STUB of the lead's trust verdict (TRUST_API.md), replaced by main's results/trust.go on merge.

import "strings"

type Severity string

const (
	SeverityNote    Severity = "note"
	SeveritySuspect Severity = "suspect"
)

type Flag struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Text     string   `json:"text"`
}

type Trust struct {
	Verdict string `json:"verdict"`
	Flags   []Flag `json:"flags,omitempty"`
}

func Assess(r *Result) Trust {
	var fl []Flag
	s := r.Summary
	for _, w := range s.Warnings {
		code := "run-note"
		switch {
		case strings.HasPrefix(w, warnLate):
			code = "generator-late"
		case strings.HasPrefix(w, warnOther):
			code = "machine-busy"
		case strings.HasPrefix(w, warnBehind):
			code = "consumers-behind"
		}
		fl = append(fl, Flag{Code: code, Severity: SeveritySuspect, Text: w})
	}
	if s.Unsent > 0 {
		fl = append(fl, Flag{Code: "unsent", Severity: SeveritySuspect, Text: "scheduled messages were never sent"})
	}
	if s.ProduceErrors > 0 {
		fl = append(fl, Flag{Code: "failed-sends", Severity: SeveritySuspect, Text: "sends failed"})
	}
	if r.Interrupted {
		fl = append(fl, Flag{Code: "interrupted", Severity: SeveritySuspect, Text: "the run was interrupted"})
	}
	if s.Generator.InProcessEngine {
		fl = append(fl, Flag{Code: "in-process", Severity: SeverityNote, Text: "the engine runs inside qbench's process"})
	}
	t := Trust{Verdict: "trusted", Flags: fl}
	if !t.Trusted() {
		t.Verdict = "flagged"
	}
	return t
}

func (t Trust) Trusted() bool { return len(t.Suspect()) == 0 }

func (t Trust) Suspect() []Flag {
	var out []Flag
	for _, f := range t.Flags {
		if f.Severity == SeveritySuspect {
			out = append(out, f)
		}
	}
	return out
}

func (t Trust) Codes() []string {
	var out []string
	for _, f := range t.Flags {
		out = append(out, f.Code)
	}
	return out
}

func (t Trust) Label() string {
	var s, n []string
	for _, f := range t.Flags {
		if f.Severity == SeveritySuspect {
			s = append(s, f.Code)
		} else {
			n = append(n, f.Code)
		}
	}
	l := "ok"
	if len(s) > 0 {
		l = "!" + strings.Join(s, ",")
	}
	if len(n) > 0 {
		l += "+" + strings.Join(n, ",")
	}
	return l
}
