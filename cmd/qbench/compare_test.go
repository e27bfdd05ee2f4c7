package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

// writeResult writes a synthetic result into dir and returns its path.
func writeResult(t *testing.T, dir, name string, o resultstest.Options) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := results.WriteFile(p, resultstest.Make(o)); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	base := writeResult(t, dir, "base.json", resultstest.Options{Name: "q", Seed: 1, Warmup: 2})
	same := writeResult(t, dir, "same.json", resultstest.Options{Name: "q", Seed: 3, Warmup: 2})
	slow := writeResult(t, dir, "slow.json", resultstest.Options{Name: "q", Seed: 2, Warmup: 2, ProduceMedian: 500 * time.Microsecond, Lost: 3})
	withGates := writeResult(t, dir, "gated.json", resultstest.Options{Name: "q", Seed: 2, Warmup: 2, ProduceMedian: 500 * time.Microsecond,
		Gates: []string{"produce.p99 <= +10%"}})
	notResult := writeFile(t, "x.json", "{}")
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string
	}{
		{"no gates", []string{"compare", base, slow}, 0, "produce.p99", nil},
		{"gates hold", []string{"compare", base, same, "--gate", "lost == 0", "--gate", "produce.p99 <= +10%"}, 0, "all 2 gates hold", nil},
		{"gates fail", []string{"compare", base, slow, "--gate", "e2e.p99 <= 20ms", "--gate", "lost == 0", "--gate", "produce.p99 <= +10%"}, 3, "FAIL  lost == 0",
			[]string{"gate failed: lost == 0: 3", "gate failed: produce.p99 <= +10%: ", "2 gate(s) failed: lost == 0; produce.p99 <= +10%"}},
		{"scenario gates", []string{"compare", base, withGates}, 3, "", []string{"gate failed: produce.p99 <= +10%"}},
		{"scenario gates ignored", []string{"compare", base, withGates, "--no-scenario-gates"}, 0, "", nil},
		{"markdown", []string{"compare", base, slow, "--format", "markdown", "--gate", "lost == 0"}, 3, "❌ regression: 1 of 1 gates failed", nil},
		{"bad gate", []string{"compare", base, slow, "--gate", "e2e.p98 <= 1ms"}, 2, "", []string{`unknown metric "e2e.p98"`}},
		{"bad format", []string{"compare", base, slow, "--format", "yaml"}, 2, "", []string{"--format"}},
		{"missing file", []string{"compare", base, "/nonexistent.json"}, 2, "", []string{"no such file"}},
		{"not a result", []string{"compare", base, notResult}, 2, "", []string{"result schema version 0"}},
		{"one argument", []string{"compare", base}, 2, "", []string{"accepts 2 arg"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := qbench(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.wantCode, stderr)
			}
			if !strings.Contains(stdout, c.wantStdout) {
				t.Errorf("stdout does not contain %q:\n%s", c.wantStdout, stdout)
			}
			for _, w := range c.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestCompareWritesReports(t *testing.T) {
	dir := t.TempDir()
	base := writeResult(t, dir, "base.json", resultstest.Options{Name: "q", Seed: 1})
	slow := writeResult(t, dir, "slow.json", resultstest.Options{Name: "q", Seed: 2, Lost: 1})
	js, junit, md := filepath.Join(dir, "c.json"), filepath.Join(dir, "gates.xml"), filepath.Join(dir, "c.md")
	_, stderr, code := qbench(t, "compare", base, slow, "--gate", "lost == 0", "--json", js, "--junit", junit, "--markdown", md)
	if code != 3 {
		t.Fatalf("exit %d; %s", code, stderr)
	}
	var c results.Comparison
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &c); err != nil || c.Pass || len(c.Gates) != 1 {
		t.Fatalf("%v %+v", err, c)
	}
	for _, p := range []string{junit, md} {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), "lost == 0") {
			t.Fatalf("%s: %v %s", p, err, b)
		}
	}
}

func TestScenarioGatesAreValidated(t *testing.T) {
	p := writeFile(t, "g.yaml", "name: g\nengine: redis\nrate: 10\ngates:\n  - lost == 0\n  - e2e.p99 <= soon\n")
	_, stderr, code := qbench(t, "validate", p)
	if code != 2 || !strings.Contains(stderr, `g.yaml:6: gates.1: gate "e2e.p99 <= soon": "soon" is not a duration`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// --baseline and --gate are checked before the run starts, so a typo costs nothing.
func TestRunBaselineUsageErrors(t *testing.T) {
	sc := writeFile(t, "s.yaml", "name: s\nengine: redis\nrate: 10\nduration: 1s\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing baseline", []string{"run", sc, "--baseline", "/nonexistent.json"}, "no such file"},
		{"relative gate without baseline", []string{"run", sc, "--gate", "produce.p99 <= +10%"}, "needs --baseline"},
		{"bad gate", []string{"run", sc, "--gate", "lost = 0"}, "want METRIC OP VALUE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := qbench(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
		})
	}
}

func TestExportAndMerge(t *testing.T) {
	dir := t.TempDir()
	a := writeResult(t, dir, "a.json", resultstest.Options{Name: "q", Seed: 1, Seconds: 4})
	b := writeResult(t, dir, "b.json", resultstest.Options{Name: "q", Seed: 2, Seconds: 4})
	merged := filepath.Join(dir, "m.json")
	if _, stderr, code := qbench(t, "merge", a, b, "-o", merged); code != 0 {
		t.Fatalf("merge: exit %d %s", code, stderr)
	}
	m, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Summary.Latency["produce"].Count; got != 8000 {
		t.Fatalf("merged produce count %d, want 8000", got)
	}
	other := writeResult(t, dir, "other.json", resultstest.Options{Name: "different", Seed: 2, Seconds: 4})
	if _, stderr, code := qbench(t, "merge", a, other, "-o", merged); code != 2 || !strings.Contains(stderr, "different scenarios") {
		t.Fatalf("merge of different scenarios: exit %d %s", code, stderr)
	}
	out := filepath.Join(dir, "export")
	stdout, stderr, code := qbench(t, "export", a, merged, "-o", out)
	if code != 0 {
		t.Fatalf("export: exit %d %s", code, stderr)
	}
	for _, f := range []string{"a.produce.hgrm", "a.e2e.hlog", "m.send_delay.hlog", "a.series.csv", "summary.csv"} {
		if !strings.Contains(stdout, f) {
			t.Errorf("export did not list %s", f)
		}
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

func resultsOptions() resultstest.Options { return resultstest.Options{Name: "q", Seed: 1, Seconds: 3} }

func TestPlotAndReportCommands(t *testing.T) {
	dir := t.TempDir()
	a := writeResult(t, dir, "a.json", resultstest.Options{Name: "q", Seed: 1, Seconds: 3, StallAt: time.Second, StallFor: 300 * time.Millisecond})
	b := writeResult(t, dir, "b.json", resultstest.Options{Name: "q", Seed: 2, Seconds: 3})
	out := filepath.Join(dir, "plots")
	stdout, stderr, code := qbench(t, "plot", a, b, "-o", out, "--format", "png")
	if code != 0 || strings.Count(stdout, ".png") != 10 { // 10 charts: throughput-bytes beside throughput
		t.Fatalf("plot: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, stderr, code := qbench(t, "plot", a, "-o", out, "--format", "gif"); code != 2 || !strings.Contains(stderr, "want png, svg or pdf") {
		t.Fatalf("bad format: exit %d %s", code, stderr)
	}
	stdout, stderr, code = qbench(t, "plot", a, "-o", out, "--format", "png", "--bin-by", "intended")
	if code != 0 || !strings.Contains(stdout, "latency-intended-e2e.png") || strings.Contains(stdout, "latency-e2e.png") {
		t.Fatalf("plot --bin-by intended: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, stderr, code := qbench(t, "plot", a, "-o", out, "--bin-by", "sent"); code != 2 || !strings.Contains(stderr, "want completed or intended") {
		t.Fatalf("bad --bin-by: exit %d %s", code, stderr)
	}
	html := filepath.Join(dir, "r.html")
	if _, stderr, code := qbench(t, "report", a, b, "--baseline", a, "--gate", "lost == 0", "-o", html); code != 0 {
		t.Fatalf("report: exit %d %s", code, stderr)
	}
	body, err := os.ReadFile(html)
	// 9 charts (nothing lost or duplicated: the loss chart is one line of text), produce and e2e
	// by intended send time (a has faults), and a's fault timeline (b, without faults, says so in
	// words).
	if err != nil || !strings.Contains(string(body), "lost == 0") || !strings.Contains(string(body), "No message lost or duplicated in any run.") || strings.Count(string(body), "<svg") != 12 {
		t.Fatalf("report: %v, %d svg", err, strings.Count(string(body), "<svg"))
	}
}
