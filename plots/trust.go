package plots

import (
	"strings"

	"qbench/results"
)

// FlagMark follows the label of a flagged run (a suspect flag: its figures may describe the
// generator, the machine or a partial run rather than the engine) in every chart's legend and
// grid cell. It is plain ASCII because the charts' embedded font has no warning sign: a PNG
// would print a box. The HTML tables use WarnSign.
const FlagMark = "[!]"

// WarnSign marks a flagged figure in the report's HTML.
const WarnSign = "⚠"

// trustOf is a run's verdict, computed by results.Assess (the one place it is made).
func trustOf(r *results.Result) results.Trust { return results.Assess(r) }

// suspectCodes lists the codes of a verdict's suspect flags, each once, comma-separated (""
// when trusted).
func suspectCodes(t results.Trust) string {
	var codes []string
	seen := map[string]bool{}
	for _, f := range t.Suspect() {
		if !seen[f.Code] {
			seen[f.Code] = true
			codes = append(codes, f.Code)
		}
	}
	return strings.Join(codes, ", ")
}

// legendLabel is a run's label as a chart's legend shows it: with FlagMark when the run is
// flagged, so a line drawn from a doubtful run never looks like any other.
func legendLabel(run Run) string {
	if run.Result != nil && !trustOf(run.Result).Trusted() {
		return run.Label + " " + FlagMark
	}
	return run.Label
}

// anyFlagged says whether a chart needs the legend's note on FlagMark.
func anyFlagged(runs []Run) bool {
	for _, r := range runs {
		if r.Result != nil && !trustOf(r.Result).Trusted() {
			return true
		}
	}
	return false
}
