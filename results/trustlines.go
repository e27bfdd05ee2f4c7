package results

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// flagMeanings says in a few words what each flag code means, for the legend under a table. The
// text of a flag (Flag.Text) says it with the run's own figures.
var flagMeanings = map[string]string{
	"generator-late":    "producers were late for qbench's own reasons: latency describes the generator",
	"engine-held":       "producers were late because the engine held every in-flight slot (the engine's latency)",
	"qbench-cpu":        "qbench was short of CPU",
	"machine-cpu":       "qbench and the engine's server together used the machine's CPU",
	"in-flight-limit":   "producers waited on their in-flight limit",
	"consumers-behind":  "consumers fell behind: end-to-end latency includes queueing",
	"steal":             "the hypervisor took CPU (steal): a shared machine",
	"machine-busy":      "other processes used the machine's CPU",
	"gc-pauses":         "qbench's garbage collector paused the run",
	"timers":            "the machine's timers woke producers late",
	"unsent":            "scheduled messages were never sent",
	"failed-sends":      "sends failed",
	"in-process":        "the engine runs inside qbench's process: CPU and memory include qbench",
	"few-samples":       "a p99 from fewer than 1,000 values",
	"interrupted":       "the run was stopped early",
	"partial":           "a segment or a partial merge: some figures are known only after a merge",
	"histogram-dropped": "latency values fell outside the histogram",
	"run-note":          "the run's own warning (see its summary)",
}

// FlagMeaning is a flag code's meaning in a few words (the code itself when unknown).
func FlagMeaning(code string) string {
	if m, ok := flagMeanings[code]; ok {
		return m
	}
	return code
}

// WriteTrustLegend prints, under a table with a trust column, what "ok", "!" and "+" mean and
// each flag code used in ts, once, in the order first seen. Nothing when every verdict is a bare
// "ok".
func WriteTrustLegend(w io.Writer, ts []Trust) {
	var codes []string
	for _, t := range ts {
		for _, c := range t.Codes() {
			if !slices.Contains(codes, c) {
				codes = append(codes, c)
			}
		}
	}
	if len(codes) == 0 {
		return
	}
	fmt.Fprintln(w, "trust: ok no flag; !CODE flagged: the figures may not be the engine's; +CODE a note")
	width := 0
	for _, c := range codes {
		width = max(width, len(c))
	}
	for _, c := range codes {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c, FlagMeaning(c))
	}
}

// writeTrust prints a result's verdict near the top of its summary: one line, then each flag's
// text in the order of the codes on that line ("warning:" for a suspect flag, "note:" for a note).
func writeTrust(w io.Writer, t Trust) {
	fmt.Fprintf(w, "trust: %s\n", trustLine(t))
	for _, f := range t.Flags {
		label := "warning"
		if f.Severity != SeveritySuspect {
			label = "note"
		}
		fmt.Fprintf(w, "%s: %s\n", label, f.Text)
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
