package results

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteTrustLegend prints, under a table with a trust column, what "ok", "!" and "+" mean and
// each flag tag used in ts (FlagLegend), once, in the order first seen. Nothing when every
// verdict is a bare "ok".
func WriteTrustLegend(w io.Writer, ts []Trust) {
	legend := FlagLegend(ts)
	if len(legend) == 0 {
		return
	}
	fmt.Fprintln(w, "trust: ok no flag; !TAG flagged: the figures may not be the engine's; +TAG a note")
	for _, l := range legend {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// writeTrust prints a result's verdict near the top of its summary: one line, then each flag's
// text in the order of the codes on that line ("warning:" for a suspect flag, "note:" for a note).
func writeTrust(w io.Writer, t Trust) {
	fmt.Fprintf(w, "trust: %s\n", trustLine(t))
	for _, sev := range []Severity{SeveritySuspect, SeverityNote} {
		label := map[Severity]string{SeveritySuspect: "warning", SeverityNote: "note"}[sev]
		for _, f := range t.Flags {
			if f.Severity == sev {
				fmt.Fprintf(w, "%s: %s\n", label, f.Text)
			}
		}
	}
}

// unflaggedWarnings are the summary's warnings that no flag of t carries as its text, printed at
// the end of the summary as before.
func unflaggedWarnings(warnings []string, t Trust) []string {
	var out []string
	for _, w := range warnings {
		if !slices.ContainsFunc(t.Flags, func(f Flag) bool { return strings.Contains(f.Text, w) }) {
			out = append(out, w)
		}
	}
	return out
}
