package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

// qbench report of a matrix with a flagged cell, held to --slo: the decision table and the grid
// mark the flagged cell, the table is coloured by the objective and one sentence names the
// cheapest run meeting it; a relative --slo is a usage error (exit 2).
func TestReportSLOAndFlags(t *testing.T) {
	dir := t.TempDir()
	ix := &results.Index{Kind: "matrix", Scenario: "persistence-explorer"}
	for i, design := range []string{"list", "stream"} {
		for j, policy := range []string{"none", "aof-always"} {
			name := "design=" + design + ",policy=" + policy
			r := resultstest.Make(resultstest.Options{Name: "persistence-explorer/" + name, Seed: uint64(1 + 2*i + j), Seconds: 3, Warmup: 1,
				ProduceMedian: time.Duration(200+400*j) * time.Microsecond})
			r.Summary.Generator.CPUPerMessageNs = float64(2000 + 1000*i + 100*j)
			if i == 0 && j == 0 {
				r.Summary.Unsent = 42361
				l := r.Summary.Latency
				pr, sd := l["produce"], l["send_delay"]
				pr.P99, sd.P99 = 21_400_000, 21_050_000
				l["produce"], l["send_delay"] = pr, sd
				r.Summary.Warnings = results.Warnings(r.Summary)
			}
			file := design + "-" + policy + ".json"
			if err := results.WriteFile(filepath.Join(dir, file), r); err != nil {
				t.Fatal(err)
			}
			ix.Cells = append(ix.Cells, results.IndexCell{Name: name, File: file, RunIDs: []string{r.RunID}, ProduceP99: r.Summary.Latency["produce"].P99, E2EP99: r.Summary.Latency["e2e"].P99,
				Params: []results.Param{{Key: "design", Value: design}, {Key: "policy", Value: policy}}})
		}
	}
	index := filepath.Join(dir, "index.json")
	if err := results.WriteIndexFile(index, ix); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	if stdout, stderr, code := qbench(t, "report", index, "--slo", "e2e.p99<=2ms", "-o", out); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"⚠ flagged: generator-late", "producers were late", `id="cheapest"`, "Cheapest meeting e2e.p99",
		"list none</strong> ⚠", `class="meets"`, "[!] generator-late", "meets objective", "unsent 42361"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if _, stderr, code := qbench(t, "report", index, "--slo", "e2e.p99<=+10%", "-o", out); code != 2 || !strings.Contains(stderr, "absolute bound") {
		t.Errorf("relative --slo: exit %d, %s", code, stderr)
	}
}
