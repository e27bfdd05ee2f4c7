package results_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"qbench/results"
	"qbench/results/resultstest"
)

// A result file's scenario name is not checked by the scenario loader (it may come from anywhere):
// the JUnit and Markdown writers must keep it data. XML escaping comes from encoding/xml, the
// Markdown title's code span from mdCode, which must not let a backtick or a line break out.
func TestCompareWritersEscapeTheName(t *testing.T) {
	hostile := "q`x</testsuite><script>alert(1)</script>\n# heading\n| a | b |"
	cur := resultstest.Make(resultstest.Options{Name: hostile, Seed: 2, Warmup: 2})
	cmp := results.Compare(baseline(), cur, "b", "c", mustGates(t, standardGates...), results.GateOptions{})
	if cmp.Current.Scenario != hostile {
		t.Fatalf("the fixture's name did not reach the comparison: %q", cmp.Current.Scenario)
	}

	var j bytes.Buffer
	if err := cmp.WriteJUnit(&j); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatalf("junit does not parse: %v", err)
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "qbench gates: "+hostile {
		t.Fatalf("junit suites %+v", doc.Suites)
	}
	if strings.Contains(j.String(), "<script>") {
		t.Errorf("junit holds raw markup:\n%s", j.String())
	}

	var m bytes.Buffer
	if err := cmp.WriteMarkdown(&m); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(m.String(), "\n")
	if !strings.HasPrefix(first, "### qbench `") || strings.Count(first, "`") != 2 || !strings.Contains(first, "<script>") {
		t.Errorf("markdown title is not one line with the name in one code span: %q", first)
	}
	if strings.Contains(m.String(), "\n# heading") {
		t.Errorf("the name's line break reached the markdown:\n%s", m.String())
	}
}
