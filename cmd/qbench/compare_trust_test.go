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

// writeFlagged writes a synthetic result whose producers left messages unsent (a suspect flag).
func writeFlagged(t *testing.T, dir, name string, o resultstest.Options, unsent int64) string {
	t.Helper()
	r := resultstest.Make(o)
	r.Summary.Unsent = unsent
	p := filepath.Join(dir, name)
	if err := results.WriteFile(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

// A latency gate that misses on a flagged pair is inconclusive: exit 5, 3 with --strict; a count
// gate (unsent == 0) is accepted, evaluated, and fails conclusively whatever the flags.
func TestCompareFlaggedPairIsInconclusive(t *testing.T) {
	dir := t.TempDir()
	base := writeResult(t, dir, "base.json", resultstest.Options{Name: "q", Seed: 1, Warmup: 2})
	slowFlagged := writeFlagged(t, dir, "cur.json", resultstest.Options{Name: "q", Seed: 2, Warmup: 2, ProduceMedian: 600 * time.Microsecond}, 4200)
	cases := []struct {
		name       string
		extra      []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{"inconclusive", nil, 5, []string{"trust: flagged: unsent", "INCONCLUSIVE  produce.p99 <= +10%"},
			[]string{"gate inconclusive: produce.p99 <= +10%", "inconclusive: 1 gate(s)"}},
		{"strict", []string{"--strict"}, 3, nil, []string{"failed or inconclusive (--strict)"}},
		{"fail-on-inconclusive", []string{"--fail-on-inconclusive"}, 3, nil, nil},
		{"markdown", []string{"--format", "markdown"}, 5, []string{"⚠️ inconclusive", "Current: **flagged: unsent"}, nil},
		{"junit", []string{"--format", "junit"}, 5, []string{`name="current.trust" value="flagged"`, "<skipped message=\"inconclusive: "}, nil},
		{"json", []string{"--format", "json"}, 5, []string{`"verdict": "inconclusive"`, `"code": "unsent"`}, nil},
		{"unsent gate", []string{"--gate", "unsent == 0"}, 3, []string{"FAIL  unsent == 0: 4200"}, []string{"gate failed: unsent == 0: 4200"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"compare", base, slowFlagged, "--gate", "produce.p99 <= +10%"}, c.extra...)
			stdout, stderr, code := qbench(t, args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.wantCode, stdout, stderr)
			}
			for _, w := range c.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range c.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	// unsent == 0 on a run that sent everything holds.
	if _, stderr, code := qbench(t, "compare", base, base, "--gate", "unsent == 0", "--gate", "failed == 0"); code != 0 {
		t.Errorf("unsent == 0 on a clean pair: exit %d: %s", code, stderr)
	}
}

// compare of two sweeps' index.json files: one verdict per cell and one overall, the exit code
// from the overall; an index against a result is a usage error naming both.
func TestCompareTwoMatrices(t *testing.T) {
	dir := t.TempDir()
	sweep := func(sub string, cells map[string]*results.Result) string {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		ix := &results.Index{Kind: "matrix", Scenario: "m"}
		for _, name := range []string{"list", "stream"} {
			if err := results.WriteFile(filepath.Join(d, name+".json"), cells[name]); err != nil {
				t.Fatal(err)
			}
			ix.Cells = append(ix.Cells, results.NewIndexCell("design="+name, []results.Param{{Key: "design", Value: name}}, name+".json", cells[name]))
		}
		p := filepath.Join(d, "index.json")
		if err := results.WriteIndexFile(p, ix); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk := func(seed uint64, med time.Duration, unsent int64) *results.Result {
		r := resultstest.Make(resultstest.Options{Name: "m", Seed: seed, Warmup: 2, ProduceMedian: med})
		r.Summary.Unsent = unsent
		return r
	}
	base := sweep("a", map[string]*results.Result{"list": mk(1, 0, 0), "stream": mk(2, 0, 0)})
	regressed := sweep("b", map[string]*results.Result{"list": mk(3, 0, 0), "stream": mk(4, 700*time.Microsecond, 0)})
	flaggedOnly := sweep("c", map[string]*results.Result{"list": mk(5, 0, 0), "stream": mk(6, 700*time.Microsecond, 99)})
	gate := []string{"--gate", "produce.p99 <= +10%"}
	stdout, stderr, code := qbench(t, append([]string{"compare", base, regressed}, gate...)...)
	if code != 3 {
		t.Fatalf("regressed matrix: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"design=list", "pass", "design=stream", "regression: 1 of 2 cells regressed, 0 inconclusive, 1 pass", "cell design=stream:\nFAIL  produce.p99"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	if !strings.Contains(stderr, "cell design=stream: gate failed: produce.p99") {
		t.Errorf("stderr:\n%s", stderr)
	}
	stdout, stderr, code = qbench(t, append([]string{"compare", base, flaggedOnly}, gate...)...)
	if code != 5 || !strings.Contains(stdout, "inconclusive: 0 of 2 cells regressed, 1 inconclusive, 1 pass") || !strings.Contains(stdout, "!unsent") {
		t.Errorf("flagged matrix: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = qbench(t, append([]string{"compare", base, base, "--format", "markdown"}, gate...)...)
	if code != 0 || !strings.Contains(stdout, "✅ pass: 0 of 2 cells regressed") {
		t.Errorf("same matrix: exit %d\n%s", code, stdout)
	}
	_, stderr, code = qbench(t, "compare", base, filepath.Join(dir, "a", "list.json"))
	if code != 2 || !strings.Contains(stderr, "not one of each") {
		t.Errorf("index against a result: exit %d: %s", code, stderr)
	}
}

// run --baseline with a sweep's index.json compares a matrix run with it cell by cell.
func TestRunMatrixAgainstBaselineIndex(t *testing.T) {
	sc := writeFile(t, "m.yaml", "name: m\nengine: embedded\nduration: 500ms\nwarmup: 100ms\nmatrix:\n  rate: [200, 400]\n")
	first := t.TempDir()
	if _, stderr, code := qbench(t, "run", "-q", sc, "-o", first); code != 0 {
		t.Fatalf("baseline sweep: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := qbench(t, "run", "-q", sc, "-o", t.TempDir(), "--baseline", filepath.Join(first, "index.json"), "--gate", "lost == 0")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"verdict  gates", "cell rate=200:\nPASS  lost == 0", "pass: 0 of 2 cells regressed"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
}
