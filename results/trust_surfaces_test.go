package results_test

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

// flagged is a run whose producers left scheduled messages unsent: a suspect flag (unsent) that
// every surface must carry beside its figures.
func flagged(seed uint64, median time.Duration) *results.Result {
	r := resultstest.Make(resultstest.Options{Name: "quickstart", Seed: seed, Warmup: 2, ProduceMedian: median})
	r.Summary.Unsent = 4200
	return r
}

func flagCodeOf(t *testing.T, r *results.Result) string {
	t.Helper()
	tr := results.Assess(r)
	if tr.Trusted() {
		t.Fatalf("the fixture is not flagged: %+v", tr)
	}
	return tr.Suspect()[0].Code
}

// A flagged run's verdict and flag code show in its summary text, the sweep table (with a legend
// line for the code), index.json's cell and summary.csv; a trusted run's say so.
func TestFlagOnEverySurface(t *testing.T) {
	bad, good := flagged(1, 0), resultstest.Make(resultstest.Options{Name: "quickstart", Seed: 2, Warmup: 2})
	code := flagCodeOf(t, bad)
	t.Run("summary", func(t *testing.T) {
		var b strings.Builder
		if err := results.WriteSummary(&b, bad); err != nil {
			t.Fatal(err)
		}
		head := strings.SplitN(b.String(), "\nlatency", 2)[0] // the verdict comes before the figures
		if !strings.Contains(head, "trust: flagged: "+code) || !strings.Contains(head, "\nwarning: ") {
			t.Errorf("summary head lacks the verdict and the flag's text:\n%s", b.String())
		}
		b.Reset()
		if err := results.WriteSummary(&b, good); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "trust: trusted\n") {
			t.Errorf("trusted run:\n%s", b.String())
		}
	})
	t.Run("sweep table and index", func(t *testing.T) {
		ix := &results.Index{Kind: "matrix", Cells: []results.IndexCell{
			results.NewIndexCell("design=list", []results.Param{{Key: "design", Value: "list"}}, "a.json", bad),
			results.NewIndexCell("design=stream", []results.Param{{Key: "design", Value: "stream"}}, "b.json", good),
		}}
		path := filepath.Join(t.TempDir(), "index.json")
		if err := results.WriteIndexFile(path, ix); err != nil {
			t.Fatal(err)
		}
		back, err := results.ReadIndexFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if c := back.Cells[0]; c.Trust.Trusted() || c.Unsent != 4200 || back.Cells[1].Trust.Verdict != "trusted" {
			t.Fatalf("index cells lost the verdict or unsent: %+v", back.Cells)
		}
		var b strings.Builder
		if err := results.WriteIndexTable(&b, back); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if !strings.Contains(lines[0], "trust") || !strings.Contains(lines[0], "unsent") || !strings.Contains(lines[0], "ach") {
			t.Errorf("header lacks trust, ach or unsent:\n%s", b.String())
		}
		if !strings.Contains(lines[1], results.Assess(bad).Label()) || !strings.Contains(lines[1], "4200") || !strings.Contains(lines[2], " ok ") {
			t.Errorf("rows lack the labels or unsent:\n%s", b.String())
		}
		if !strings.Contains(b.String(), "\n  "+results.Tag(code)+": ") {
			t.Errorf("no legend line for %s:\n%s", code, b.String())
		}
		for _, l := range lines {
			if len(l) > 100 {
				t.Errorf("line of %d columns:\n%q", len(l), l)
			}
		}
	})
	t.Run("summary.csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := results.WriteSummaryCSV(&b, []string{"bad", "good"}, []*results.Result{bad, good}); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := func(row int, name string) string {
			for i, h := range rows[0] {
				if h == name {
					return rows[row][i]
				}
			}
			t.Fatalf("no %s column: %v", name, rows[0])
			return ""
		}
		if col(1, "trust") != "flagged" || !strings.Contains(col(1, "flags"), code) || col(1, "unsent") != "4200" || col(2, "trust") != "trusted" {
			t.Errorf("rows %v", rows[1:])
		}
		if col(1, "knee") != "" || col(1, "engine_cpu_per_msg_ns") != "" {
			t.Errorf("a figure the run did not measure reads as a value: knee %q, engine CPU %q", col(1, "knee"), col(1, "engine_cpu_per_msg_ns"))
		}
	})
}

// Each compare format shows both sides' verdicts and the flag's code; a gate that misses on a
// flagged side is inconclusive (JUnit: skipped, not failed), and the overall verdict says so.
func TestCompareFormatsCarryTrust(t *testing.T) {
	bad := flagged(2, 500*time.Microsecond)
	code := flagCodeOf(t, bad)
	cmp := results.Compare(baseline(), bad, "baseline.json", "current.json", mustGates(t, "produce.p99 <= +10%", "e2e.p99 <= 20ms"), results.GateOptions{})
	if cmp.Verdict != results.VerdictInconclusive || cmp.Pass {
		t.Fatalf("verdict %q pass %v, want inconclusive", cmp.Verdict, cmp.Pass)
	}
	if g := cmp.Gates[0]; g.Verdict != results.GateInconclusive || !strings.Contains(g.Why, "current flagged "+code) {
		t.Fatalf("gate %+v", g)
	}
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"text", func(b *bytes.Buffer) error { return cmp.WriteText(b) }, []string{"trust: trusted", "trust: flagged: " + code, "INCONCLUSIVE  produce.p99", "inconclusive: 1 of 2 gates missed"}},
		{"json", func(b *bytes.Buffer) error { return cmp.WriteJSON(b) }, []string{`"verdict": "flagged"`, `"code": "` + code + `"`, `"verdict": "inconclusive"`}},
		{"markdown", func(b *bytes.Buffer) error { return cmp.WriteMarkdown(b) }, []string{"Current: **flagged: " + code, "- `" + code + "` (suspect)", "⚠️ inconclusive"}},
		{"junit", func(b *bytes.Buffer) error { return cmp.WriteJUnit(b) }, []string{`name="current.trust" value="flagged"`, `name="current.flags" value="` + code, "<skipped message=\"inconclusive: current flagged " + code}},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range f.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%s", f.name, w, b.String())
			}
		}
	}
	var b bytes.Buffer
	if err := cmp.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil || doc.Suites[0].Failures != 0 || doc.Suites[0].Skipped != 1 {
		t.Errorf("JUnit: %v %+v, want 0 failures and 1 skipped", err, doc)
	}
}

// A flag makes a timing's miss inconclusive, not a count's: a message lost or unsent on a busy
// machine is gone all the same.
func TestFlagsDoNotExcuseCounts(t *testing.T) {
	bad := flagged(2, 500*time.Microsecond)
	gs := results.CheckGates(mustGates(t, "unsent == 0", "produce.p99 <= 1us"), nil, bad, results.GateOptions{})
	if gs[0].Verdict != results.GateFail || gs[0].Current != 4200 {
		t.Errorf("unsent == 0 on 4200 unsent: %+v", gs[0])
	}
	if gs[1].Verdict != results.GateInconclusive {
		t.Errorf("a latency gate on a flagged run: %+v", gs[1])
	}
	if v := results.OverallVerdict(gs); v != results.VerdictRegression {
		t.Errorf("overall %q, want regression", v)
	}
}

// A failed final sweep leaves in lost what the engine may still hold: a lost gate that misses on
// such a run is inconclusive, and the flag is in the summary text and the sweep table.
func TestSweepFailedDoubtsLost(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Name: "quickstart", Seed: 3, Warmup: 2})
	r.Summary.Ledger.Lost = 4096
	r.Errors = []results.ErrorCount{{Where: results.ErrorWhereSweep, Message: "the sweep's connection was refused", Count: 1}}
	if code := flagCodeOf(t, r); code != results.CodeSweepFailed {
		t.Fatalf("flag %s, want %s", code, results.CodeSweepFailed)
	}
	gs := results.CheckGates(mustGates(t, "lost == 0", "unsent == 0"), nil, r, results.GateOptions{})
	if gs[0].Verdict != results.GateInconclusive || !strings.Contains(gs[0].Why, "current flagged "+results.CodeSweepFailed) {
		t.Errorf("lost == 0 on a failed sweep: %+v, want inconclusive", gs[0])
	}
	if gs[1].Verdict != results.GatePass {
		t.Errorf("unsent == 0: %+v", gs[1])
	}
	var b strings.Builder
	if err := results.WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "trust: flagged: "+results.CodeSweepFailed) || !strings.Contains(b.String(), "the sweep's connection was refused") {
		t.Errorf("summary lacks the flag:\n%s", b.String())
	}
	b.Reset()
	ix := &results.Index{Kind: "matrix", Cells: []results.IndexCell{results.NewIndexCell("design=list", []results.Param{{Key: "design", Value: "list"}}, "a.json", r)}}
	if err := results.WriteIndexTable(&b, ix); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "!"+results.Tag(results.CodeSweepFailed)) || !strings.Contains(b.String(), "sweep: the final sweep failed") {
		t.Errorf("sweep table lacks the tag or its legend:\n%s", b.String())
	}
}

// The new gate metrics read their figures, and say when a run did not measure one.
func TestNewGateMetrics(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Seed: 1})
	r.Summary.Unsent = 7
	r.Engine.Stats = map[string]int64{"proc_cpu_ns": 20 * r.Summary.Ledger.Acked * 1000}
	r.Summary.Knee = &results.Knee{Objective: "produce.p99 <= 5ms", Reached: true, OfferedRate: 4571}
	cases := []struct {
		gate string
		want float64
		pass bool
	}{
		{"unsent == 0", 7, false},
		{"unsent <= 10", 7, true},
		{"failed == 0", 0, true},
		{"knee >= 4000", 4571, true},
		{"engine_cpu_per_msg <= 10us", 20000, false},
	}
	for _, c := range cases {
		t.Run(c.gate, func(t *testing.T) {
			g := results.CheckGates(mustGates(t, c.gate), nil, r, results.GateOptions{})[0]
			if g.Current != c.want || g.Pass != c.pass || g.Error != "" {
				t.Fatalf("%+v", g)
			}
		})
	}
	plain := resultstest.Make(resultstest.Options{Seed: 1})
	for _, gate := range []string{"knee >= 1", "engine_cpu_per_msg <= 1ms"} {
		if g := results.CheckGates(mustGates(t, gate), nil, plain, results.GateOptions{})[0]; g.Error == "" || g.Verdict != results.GateFail {
			t.Errorf("%s on a run that did not measure it: %+v", gate, g)
		}
	}
}

// One convention for spread: the range R = max - min, shown as "(range R)" and allowed for as
// baseline + R, in the text, the Markdown and the gate alike.
func TestSpreadIsTheRange(t *testing.T) {
	base := repeated(t, 10, 400*time.Microsecond, 80*time.Microsecond)
	cur := repeated(t, 20, 460*time.Microsecond, 80*time.Microsecond)
	m, _ := results.LookupMetric("produce.p99")
	r := results.Spread(base, m)
	cmp := results.Compare(base, cur, "b", "c", mustGates(t, "produce.p99 <= +10%"), results.GateOptions{Noise: true})
	g := cmp.Gates[0]
	if g.NoiseLimit != *g.Baseline+max(r, results.Spread(cur, m)) {
		t.Errorf("noise limit %v, want baseline %v + range", g.NoiseLimit, *g.Baseline)
	}
	var text, md bytes.Buffer
	_ = cmp.WriteText(&text)
	_ = cmp.WriteMarkdown(&md)
	want := "(range " + results.FormatValue(results.UnitNs, r) + ")"
	for name, b := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if !strings.Contains(b, want) || strings.Contains(b, "±") {
			t.Errorf("%s: want %q and no ±:\n%s", name, want, b)
		}
	}
}

// Two sweeps compare cell by cell, matched by parameters whatever their order: one verdict per
// cell (a regressed cell, a flagged one, one missing) and the worst overall.
func TestCompareMatrixPerCell(t *testing.T) {
	dir := t.TempDir()
	write := func(sub, file string, r *results.Result) {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteFile(filepath.Join(dir, sub, file), r); err != nil {
			t.Fatal(err)
		}
	}
	p := func(v string) []results.Param { return []results.Param{{Key: "design", Value: v}} }
	cellsOf := func(sub string, cells map[string]*results.Result, order []string) string {
		ix := &results.Index{Kind: "matrix"}
		for _, name := range order {
			write(sub, name+".json", cells[name])
			ix.Cells = append(ix.Cells, results.NewIndexCell("design="+name, p(name), name+".json", cells[name]))
		}
		path := filepath.Join(dir, sub, "index.json")
		if err := results.WriteIndexFile(path, ix); err != nil {
			t.Fatal(err)
		}
		return path
	}
	mk := func(seed uint64, med time.Duration) *results.Result {
		return resultstest.Make(resultstest.Options{Name: "m", Seed: seed, Warmup: 2, ProduceMedian: med})
	}
	basePath := cellsOf("base", map[string]*results.Result{"list": mk(1, 0), "stream": mk(2, 0), "pubsub": mk(3, 0), "gone": mk(4, 0)}, []string{"list", "stream", "pubsub", "gone"})
	curPath := cellsOf("cur", map[string]*results.Result{"list": mk(5, 0), "stream": mk(6, 800*time.Microsecond), "pubsub": flagged(7, 800*time.Microsecond)}, []string{"pubsub", "stream", "list"})
	for _, path := range []string{basePath, curPath} {
		if ok, err := results.IsIndexFile(path); !ok || err != nil {
			t.Fatalf("%s not recognised as an index: %v", path, err)
		}
	}
	if ok, _ := results.IsIndexFile(filepath.Join(dir, "base", "list.json")); ok {
		t.Fatal("a result taken for an index")
	}
	base, _ := results.ReadIndexFile(basePath)
	cur, _ := results.ReadIndexFile(curPath)
	gates := mustGates(t, "produce.p99 <= +10%")
	mc, err := results.CompareMatrix(base, cur, basePath, curPath, results.MatrixInputs{
		Gates:   func(*results.Result) ([]results.Gate, error) { return gates, nil },
		Options: func(*results.Result) results.GateOptions { return results.GateOptions{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range mc.Cells {
		got[c.Name] = c.Verdict
	}
	want := map[string]string{"design=pubsub": "inconclusive", "design=stream": "regression", "design=list": "pass", "design=gone": "inconclusive"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("cell %s: %q, want %q (all %v)", k, got[k], v, got)
		}
	}
	if mc.Verdict != results.VerdictRegression {
		t.Errorf("overall %q", mc.Verdict)
	}
	var b bytes.Buffer
	if err := mc.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"design=stream", "regression", "not in the current sweep", "regression: 1 of 4 cells regressed, 2 inconclusive, 1 pass"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	if err := mc.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<testsuite "); n != 4 {
		t.Errorf("%d JUnit suites, want one per cell:\n%s", n, b.String())
	}
}

// The sweep table shows each cell's knee: the offered rate where the objective first broke, or
// ">=" the highest offered second when it held throughout; no knee column without a knee.
func TestIndexTableKnee(t *testing.T) {
	broke := resultstest.Make(resultstest.Options{Seed: 1})
	broke.Summary.Knee = &results.Knee{Objective: "produce.p99 <= 5ms", Reached: true, OfferedRate: 4571}
	held := resultstest.Make(resultstest.Options{Seed: 2})
	held.Summary.Knee = &results.Knee{Objective: "produce.p99 <= 5ms"}
	for i := range held.Series {
		held.Series[i].Offered = int64(1000 + 100*i)
	}
	ix := &results.Index{Cells: []results.IndexCell{
		results.NewIndexCell("arrival=poisson", []results.Param{{Key: "arrival", Value: "poisson"}}, "a.json", broke),
		results.NewIndexCell("arrival=uniform", []results.Param{{Key: "arrival", Value: "uniform"}}, "b.json", held),
	}}
	var b strings.Builder
	if err := results.WriteIndexTable(&b, ix); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], "knee") || !strings.Contains(lines[1], "4571/s") || !strings.Contains(lines[2], ">=1900/s") {
		t.Errorf("knee column:\n%s", b.String())
	}
	b.Reset()
	plain := results.NewIndexCell("x=1", nil, "c.json", resultstest.Make(resultstest.Options{Seed: 3}))
	if err := results.WriteIndexTable(&b, &results.Index{Cells: []results.IndexCell{plain}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "knee") {
		t.Errorf("a sweep without knee objectives shows a knee column:\n%s", b.String())
	}
}
