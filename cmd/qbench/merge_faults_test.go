package main

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"qbench/results"
)

// Two faulted runs on the embedded server (a consumer crash that loses the message it held, and
// a pause), merged as repetitions, keep their fault rows with the costs added, and the report's
// decision table reads the loss per fault kind from the merged result (it read "no faults"
// when merge dropped the windows).
func TestMergedFaultedRunsKeepTheirFaultCosts(t *testing.T) {
	sc := writeFile(t, "faulted.yaml", `
name: merge-faults
engine: embedded
design: list
producers: 1
consumers: 2
rate: 400
duration: 1s
warmup: 0s
drain_timeout: 500ms
redis:
  list:
    count: 1
faults:
  - {at: 300ms, kind: consumer-crash, point: before-work, consumer: 0}
  - {at: 400ms, kind: consumer-pause, consumer: 1, duration: 200ms}
`)
	dir := t.TempDir()
	var runs []*results.Result
	var files []string
	for i := range 2 {
		f := filepath.Join(dir, fmt.Sprintf("run%d.json", i))
		if stdout, stderr, code := qbench(t, "run", "-q", sc, "-o", f); code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		r, err := results.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Faults) != 2 {
			t.Fatalf("run %d has %d fault windows, want 2", i, len(r.Faults))
		}
		runs, files = append(runs, r), append(files, f)
	}
	merged := filepath.Join(dir, "merged.json")
	if stdout, stderr, code := qbench(t, append([]string{"merge", "--repetitions", "-o", merged}, files...)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Faults) != 2 {
		t.Fatalf("merged result has %d fault windows, want the 2 faults aligned", len(m.Faults))
	}
	byKind := map[string]int64{}
	var charged int64
	for i, w := range m.Faults {
		a, b := runs[0].Faults[i], runs[1].Faults[i]
		if w.Kind != a.Kind || w.Lost != a.Lost+b.Lost || w.Duplicates != a.Duplicates+b.Duplicates || w.ProduceErrors != a.ProduceErrors+b.ProduceErrors {
			t.Errorf("merged window %d %+v, want %s with the costs of %+v and %+v added", i, w, a.Kind, a, b)
		}
		byKind[w.Kind] += w.Lost
		charged += w.Lost
	}
	if byKind["consumer-crash"] < 2 {
		t.Errorf("the crashes lost %d in all, want at least the message each held", byKind["consumer-crash"])
	}
	if charged != m.Summary.Ledger.Lost {
		t.Errorf("fault windows charge %d lost, the merged ledger has %d", charged, m.Summary.Ledger.Lost)
	}
	t.Logf("merged windows: %+v", m.Faults)
	if len(m.Repetitions) != 2 || len(m.Repetitions[1].Faults) != 2 {
		t.Fatalf("repetitions %d, want 2 each with its own 2 windows", len(m.Repetitions))
	}

	// The decision table of a report of one run and the merged result.
	report := filepath.Join(dir, "report.html")
	if stdout, stderr, code := qbench(t, "report", "-o", report, files[0], merged); code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(string(page))
	kinds := []string{"consumer-crash", "consumer-pause"}
	sort.Strings(kinds)
	var want []string
	for _, k := range kinds {
		var each []string
		for _, r := range runs {
			var n int64
			for _, w := range r.Faults {
				if w.Kind == k {
					n += w.Lost
				}
			}
			each = append(each, fmt.Sprint(n))
		}
		want = append(want, fmt.Sprintf("%s %d (%s)", k, byKind[k], strings.Join(each, " + ")))
	}
	if row := strings.Join(want, ", "); !strings.Contains(text, row) {
		t.Errorf("the report's decision table has no %q for the merged runs", row)
	}
	if strings.Contains(text, ">no faults<") {
		t.Error("the report's decision table says no faults")
	}
}
