package plots_test

import (
	"bytes"
	"strings"
	"testing"

	"qbench/plots"
	"qbench/results"
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

// Each consumer's share has a table in the report when a run has several consumers.
func TestReportShowsPerConsumerShares(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Name: "q", Seed: 1, Seconds: 4})
	r.Summary.PerConsumer = []results.ConsumerShare{{Consumer: 0, Deliveries: 3100}, {Consumer: 1, Group: 1, Deliveries: 2500, Missed: 600}}
	var out bytes.Buffer
	if err := plots.WriteReport(&out, []plots.Run{{Label: "pubsub", Result: r}}, plots.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{"pubsub: per consumer", "<td>3100</td>", `<td class="fail">600</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
