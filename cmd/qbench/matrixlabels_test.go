package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

// The report of an eight-cell matrix labels each cell by its axis values ("server aof-always"),
// in the decision table and in the charts' legends, never by its whole cell name
// ("engine=server,policy=aof-always"), and every label is distinct.
func TestMatrixReportUsesShortCellLabels(t *testing.T) {
	dir := t.TempDir()
	ix := &results.Index{Kind: "matrix", Scenario: "persistence-explorer"}
	var want []string
	for i, engine := range []string{"redis", "server"} {
		for j, policy := range []string{"none", "snapshot", "aof-everysec", "aof-always"} {
			name := "engine=" + engine + ",policy=" + policy
			r := resultstest.Make(resultstest.Options{Name: "persistence-explorer/" + name, Seed: uint64(1 + 4*i + j), Seconds: 3, Warmup: 1,
				ProduceMedian: time.Duration(200+150*j) * time.Microsecond})
			file := engine + "-" + policy + ".json"
			if err := results.WriteFile(filepath.Join(dir, file), r); err != nil {
				t.Fatal(err)
			}
			ix.Cells = append(ix.Cells, results.IndexCell{Name: name, File: file, RunIDs: []string{r.RunID}, ProduceP99: r.Summary.Latency["produce"].P99, E2EP99: r.Summary.Latency["e2e"].P99,
				Params: []results.Param{{Key: "engine", Value: engine}, {Key: "policy", Value: policy}}})
			want = append(want, engine+" "+policy)
		}
	}
	index := filepath.Join(dir, "index.json")
	if err := results.WriteIndexFile(index, ix); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	if stdout, stderr, code := qbench(t, "report", index, "-o", out); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	table := html[strings.Index(html, `<h2 id="decision">`):]
	table = table[:strings.Index(table, "</table>")]
	var rows []string
	for _, m := range regexp.MustCompile(`<span class="swatch"[^>]*></span>([^<]+)</td>`).FindAllStringSubmatch(table, -1) {
		rows = append(rows, m[1])
	}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("decision table rows %q, want %q", rows, want)
	}
	for _, label := range want {
		// Legends are SVG text: each label in every chart with a legend of runs.
		if n := strings.Count(html, ">"+label+"</text>"); n < 4 {
			t.Errorf("label %q in %d chart legends, want every chart of runs", label, n)
		}
	}
	for _, c := range ix.Cells {
		if strings.Contains(html, ">"+c.Name+"</text>") || strings.Contains(html, "</span>"+c.Name+"</td>") {
			t.Errorf("cell %s labelled by its whole name", c.Name)
		}
	}
}
