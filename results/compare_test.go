package results_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"qbench/results"
	"qbench/results/resultstest"
)

func baseline() *results.Result {
	return resultstest.Make(resultstest.Options{Name: "quickstart", Seed: 1, Warmup: 2})
}

// regressed is 25% slower to produce and lost 3 messages.
func regressed() *results.Result {
	return resultstest.Make(resultstest.Options{Name: "quickstart", Seed: 2, Warmup: 2, ProduceMedian: 500 * time.Microsecond, Lost: 3})
}

func mustGates(t *testing.T, exprs ...string) []results.Gate {
	t.Helper()
	gs, err := results.ParseGates(exprs, "flag")
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

var standardGates = []string{"e2e.p99 <= 20ms", "lost == 0", "produce.p99 <= +10%", "produce_rate >= -5%"}

func TestCompareGolden(t *testing.T) {
	cases := []struct {
		name     string
		current  *results.Result
		wantPass bool
	}{
		{"regressed", regressed(), false},
		{"unchanged", resultstest.Make(resultstest.Options{Name: "quickstart", Seed: 3, Warmup: 2}), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp := results.Compare(baseline(), c.current, "baseline.json", "current.json", mustGates(t, standardGates...), results.GateOptions{})
			if cmp.Pass != c.wantPass {
				t.Errorf("pass = %v, want %v", cmp.Pass, c.wantPass)
			}
			for _, f := range []struct {
				ext   string
				write func(*bytes.Buffer) error
			}{
				{"txt", func(b *bytes.Buffer) error { return cmp.WriteText(b) }},
				{"md", func(b *bytes.Buffer) error { return cmp.WriteMarkdown(b) }},
				{"json", func(b *bytes.Buffer) error { return cmp.WriteJSON(b) }},
				{"junit.xml", func(b *bytes.Buffer) error { return cmp.WriteJUnit(b) }},
			} {
				var b bytes.Buffer
				if err := f.write(&b); err != nil {
					t.Fatal(err)
				}
				golden(t, "compare/"+c.name+"."+f.ext, b.Bytes())
			}
		})
	}
}

func TestRegressionNamesFailingGates(t *testing.T) {
	cmp := results.Compare(baseline(), regressed(), "b", "c", mustGates(t, standardGates...), results.GateOptions{})
	var failed []string
	for _, g := range results.FailedGates(cmp.Gates) {
		failed = append(failed, g.Expr)
	}
	if got, want := strings.Join(failed, "; "), "lost == 0; produce.p99 <= +10%"; got != want {
		t.Fatalf("failed gates %q, want %q", got, want)
	}
}

func TestJUnitIsWellFormed(t *testing.T) {
	cmp := results.Compare(baseline(), regressed(), "b", "c", mustGates(t, standardGates...), results.GateOptions{})
	var b bytes.Buffer
	if err := cmp.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if s.Tests != 4 || s.Failures != 2 || len(s.Cases) != 4 || s.Cases[1].Failure == nil || s.Cases[0].Failure != nil {
		t.Fatalf("junit %+v", s)
	}
}

func TestParseGate(t *testing.T) {
	cases := []struct {
		expr     string
		metric   string
		op       string
		value    float64
		relative bool
		err      string
	}{
		{expr: "e2e.p99 <= 20ms", metric: "e2e.p99", op: "<=", value: 20e6},
		{expr: "e2e.p99<=20ms", metric: "e2e.p99", op: "<=", value: 20e6},
		{expr: "produce.p99.9 < 1.5s", metric: "produce.p99.9", op: "<", value: 1.5e9},
		{expr: "send_delay.max <= 250us", metric: "send_delay.max", op: "<=", value: 250e3},
		{expr: "send_delay.max <= 250µs", metric: "send_delay.max", op: "<=", value: 250e3},
		{expr: "e2e.p50 <= 1000", metric: "e2e.p50", op: "<=", value: 1000},
		{expr: "lost == 0", metric: "lost", op: "==", value: 0},
		{expr: "duplicates != 1", metric: "duplicates", op: "!=", value: 1},
		{expr: "produce.p99 <= +10%", metric: "produce.p99", op: "<=", value: 10, relative: true},
		{expr: "produce_rate >= -5%", metric: "produce_rate", op: ">=", value: -5, relative: true},
		{expr: "deliver_rate > 4900", metric: "deliver_rate", op: ">", value: 4900},
		{expr: "e2e.p99 20ms", err: `gate "e2e.p99 20ms": want METRIC OP VALUE`},
		{expr: "e2e.p98 <= 20ms", err: `gate "e2e.p98 <= 20ms": unknown metric "e2e.p98"`},
		{expr: "e2e.p99 <= fast", err: `"fast" is not a duration`},
		{expr: "lost == 0ms", err: `"0ms" is not a number`},
		{expr: "lost == +1%", err: "a relative bound needs"},
		{expr: "lost <= x%", err: `"x%" is not a percentage`},
		{expr: "lost <=", err: "no value after <="},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			g, err := results.ParseGate(c.expr)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Metric != c.metric || g.Op != c.op || g.Value != c.value || g.Relative != c.relative {
				t.Fatalf("got %+v", g)
			}
		})
	}
}

func TestRelativeGateWithoutBaselineFails(t *testing.T) {
	rs := results.CheckGates(mustGates(t, "produce.p99 <= +10%", "lost == 0"), nil, baseline(), results.GateOptions{})
	if rs[0].Pass || rs[0].Error == "" || !rs[1].Pass {
		t.Fatalf("%+v", rs)
	}
}

func TestScenarioGates(t *testing.T) {
	r := resultstest.Make(resultstest.Options{Gates: []string{"e2e.p99 <= 20ms", "lost == 0"}})
	gs, err := results.ScenarioGates(r)
	if err != nil || len(gs) != 2 || gs[0].Source != "scenario" || gs[1].Metric != "lost" {
		t.Fatalf("%v %+v", err, gs)
	}
}

// repeated merges n repetitions whose produce medians vary by about ±spread.
func repeated(t *testing.T, seed uint64, median, spread time.Duration) *results.Result {
	t.Helper()
	var rs []*results.Result
	for i, f := range []float64{-1, 0, 1} {
		rs = append(rs, resultstest.Make(resultstest.Options{Name: "quickstart", Seed: seed + uint64(i), Warmup: 2, Seconds: 5,
			ProduceMedian: median + time.Duration(f*float64(spread))}))
	}
	m, err := results.Merge(rs, results.MergeOptions{Mode: results.MergeRepetitions})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A change inside the repetitions' range is inconclusive in noise-aware mode (not a pass, not a
// failure) and fails without it; a change well outside the range fails in both.
func TestNoiseAwareGate(t *testing.T) {
	base := repeated(t, 10, 400*time.Microsecond, 80*time.Microsecond)
	slightly := repeated(t, 20, 460*time.Microsecond, 80*time.Microsecond)
	much := repeated(t, 30, 800*time.Microsecond, 80*time.Microsecond)
	gates := mustGates(t, "produce.p99 <= +10%")
	cases := []struct {
		name       string
		current    *results.Result
		noise      bool
		verdict    string
		withinNois bool
	}{
		{"small change, plain", slightly, false, results.GateFail, false},
		{"small change, noise-aware", slightly, true, results.GateInconclusive, true},
		{"large change, plain", much, false, results.GateFail, false},
		{"large change, noise-aware", much, true, results.GateFail, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := results.CheckGates(gates, base, c.current, results.GateOptions{Noise: c.noise})[0]
			if g.Pass || g.Verdict != c.verdict || g.WithinNoise != c.withinNois {
				t.Fatalf("%s", g.Describe())
			}
			if c.noise && g.Noise <= 0 {
				t.Fatalf("no noise measured: %+v", g)
			}
		})
	}
}

// ParseGate never panics, and whatever it accepts it can check.
func FuzzParseGate(f *testing.F) {
	for _, s := range append(standardGates, "e2e.p99.9 < 1.5s", "lost != 3", "send_delay.max <= 250µs", "x", "<=", "lost <= %", "e2e.p99 <= -1e309%") {
		f.Add(s)
	}
	r := baseline()
	f.Fuzz(func(t *testing.T, expr string) {
		g, err := results.ParseGate(expr)
		if err != nil {
			return
		}
		res := results.CheckGates([]results.Gate{g}, r, r, results.GateOptions{Noise: true})
		if len(res) != 1 || res[0].Describe() == "" {
			t.Fatalf("%q: %+v", expr, res)
		}
	})
}
