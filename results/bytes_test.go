package results_test

import (
	"bytes"
	"strings"
	"testing"

	"qbench/results"
	"qbench/results/resultstest"
)

// The summary gives bytes per second beside messages per second, produced and delivered, and
// compare and gates know both as metrics.
func TestSummaryShowsBytesPerSecond(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Seed: 1, Seconds: 4})
	var b bytes.Buffer
	if err := results.WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "produced 1000 msg/s (250.0 KiB/s), delivered 1000 msg/s (250.0 KiB/s)") {
		t.Errorf("summary lacks bytes per second:\n%s", b.String())
	}
	for _, name := range []string{"produce_bytes_rate", "deliver_bytes_rate"} {
		g, err := results.ParseGate(name + " >= 200000")
		if err != nil {
			t.Fatal(err)
		}
		if g.Metric != name {
			t.Errorf("gate on %s reads %s", name, g.Metric)
		}
	}
}
