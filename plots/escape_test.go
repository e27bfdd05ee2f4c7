package plots_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results/resultstest"
)

// Run labels and scenario names reach the HTML report as text (html/template, and gonum's SVG
// text, which it escapes): markup in them stays text.
func TestReportEscapesNames(t *testing.T) {
	hostile := `q"><script>alert(1)</script>`
	runs := []plots.Run{{Label: hostile, Result: resultstest.Make(resultstest.Options{Name: hostile, Seed: 1, Seconds: 4, Warmup: 1,
		StallAt: 2 * time.Second, StallFor: 300 * time.Millisecond})}}
	var b bytes.Buffer
	if err := plots.WriteReport(&b, runs, plots.ReportOptions{Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "<script") {
		t.Errorf("the report holds the name's markup unescaped")
	}
	if !strings.Contains(s, "&lt;script&gt;") && !strings.Contains(s, "&#34;&gt;&lt;script") {
		t.Errorf("the escaped name is nowhere in the report")
	}
}
