package plots_test

import (
	"bytes"
	"strings"
	"testing"

	"qbench/plots"
	"qbench/results/resultstest"
)

// Bytes per second stand beside messages per second in the report: produced and delivered in
// the runs table, produced in the decision table of a multi-run report.
func TestReportShowsBytesPerSecond(t *testing.T) {
	a := resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 4})
	b := resultstest.Make(resultstest.Options{Name: "q", Seed: 2, Seconds: 4, Rate: 600})
	var out bytes.Buffer
	if err := plots.WriteReport(&out, []plots.Run{{Label: "a", Result: a}, {Label: "b", Result: b}}, plots.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{"250.0 KiB/s", "150.0 KiB/s", "/s (250.0 KiB/s)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
