package plots_test

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// flagRun makes a fixture's result what the issue found: producers late (send delay p99 21.05 ms of
// produce p99 21.40 ms, so the latency describes the generator) and 42,361 scheduled messages
// never sent. The warning is the rules' own (results.Warnings), so results.Assess flags it.
func flagRun(r *results.Result) {
	l := r.Summary.Latency
	pr, sd := l["produce"], l["send_delay"]
	pr.P99, sd.P99 = 21_400_000, 21_050_000
	l["produce"], l["send_delay"] = pr, sd
	e2e := l["e2e"]
	e2e.P99 = 21_700_000
	l["e2e"] = e2e
	r.Summary.Unsent = 42361
	r.Summary.Warnings = results.Warnings(r.Summary)
}

// flaggedMatrix is the eight-cell matrix with cells 0 and 6 flagged, each cell's offered rate
// per second in its series, and its grid's index.
func flaggedMatrix() ([]plots.Run, *results.Index) {
	runs := matrixRuns()
	ix := &results.Index{Kind: "matrix", Scenario: "persistence-explorer"}
	for i, run := range runs {
		r := run.Result
		for k := range r.Series {
			r.Series[k].Offered = 1000
		}
		r.Summary.Generator.CPUPerMessageNs = float64(3000 + 500*i)
		if i == 0 || i == 6 {
			flagRun(r)
		}
		engine, policy, _ := strings.Cut(run.Label, " ")
		ix.Cells = append(ix.Cells, results.IndexCell{Name: "engine=" + engine + ",policy=" + policy,
			Params:     []results.Param{{Key: "engine", Value: engine}, {Key: "policy", Value: policy}},
			ProduceP99: r.Summary.Latency["produce"].P99, E2EP99: r.Summary.Latency["e2e"].P99, Lost: r.Summary.Ledger.Lost})
	}
	return runs, ix
}

func matrixResults(runs []plots.Run) []*results.Result {
	var rs []*results.Result
	for _, r := range runs {
		rs = append(rs, r.Result)
	}
	return rs
}

func writeMatrixReport(t *testing.T, slo []string) string {
	t.Helper()
	runs, ix := flaggedMatrix()
	s, err := plots.ParseSLOs(slo)
	if err != nil {
		t.Fatal(err)
	}
	grids, err := plots.GridsFromRuns(ix, matrixResults(runs), s)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.WriteReport(&b, runs, plots.ReportOptions{Extra: grids, SLO: s, Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A flagged cell's verdict and its reasons are in the report: the decision table's trust cell
// (marked, with the flags' texts as its tooltip and in the footnote), a banner at the top, the
// run's own section, the legends ([!]) and the grid; unsent, achieved of offered are columns.
func TestReportShowsFlags(t *testing.T) {
	html := writeMatrixReport(t, nil)
	for _, want := range []string{
		plots.WarnSign + " flagged: generator-late", // the decision table's trust cell
		`class="flag" title="generator-late: producers were late: send delay p99 21.05ms of produce p99 21.40ms`,
		`id="decision-flags"`, `class="banner"`, "2 of 8 runs are flagged", "redis none (generator-late, unsent)",
		"<th>unsent</th>", ">42361<", "<th>achieved / offered</th>", ">100%<",
		"Trust:</strong> <span class=\"fail\">" + plots.WarnSign + " flagged",
		"<code>unsent</code>",
		"redis none " + plots.FlagMark,     // a legend
		plots.FlagMark + " generator-late", // a grid cell
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(html, "producers were late"); n < 3 {
		t.Errorf("the late-producers text appears %d times; want it in the table's tooltip, footnote and run section", n)
	}
	// The unflagged runs read ok, in the decision table and in the summary table.
	if n := strings.Count(html, `class="trusted"`); n != 12 {
		t.Errorf("%d trusted cells in the decision and summary tables, want 6 each", n)
	}
	if n := strings.Count(html, `<td class="flag"`); n != 4 {
		t.Errorf("%d flagged cells in the decision and summary tables, want 2 each", n)
	}
}

// The grid marks a flagged cell with a dashed outline and hatching in HatchColour and writes its
// codes in it; a grid with no flagged cell has neither.
func TestGridMarksFlaggedCells(t *testing.T) {
	runs, ix := flaggedMatrix()
	outline := "stroke:" + hexOf(plots.HatchColour)
	for _, c := range []struct {
		name    string
		results []*results.Result
		flagged int
		// index stores its cells' verdicts (an index written before it did has none)
		stored bool
	}{{"flagged", matrixResults(runs), 2, false}, {"index without verdicts", nil, 0, false}, {"index with verdicts", nil, 2, true}} {
		t.Run(c.name, func(t *testing.T) {
			ix := *ix
			ix.Cells = append([]results.IndexCell(nil), ix.Cells...)
			if c.stored {
				for i := range ix.Cells {
					ix.Cells[i].Trust = results.Assess(runs[i].Result)
					ix.Cells[i].Unsent = runs[i].Result.Summary.Unsent
				}
			}
			grids, err := plots.GridsFromRuns(&ix, c.results, plots.SLO{})
			if err != nil {
				t.Fatal(err)
			}
			svg := string(renderSVG(t, grids[1]))
			outlines := 0
			for _, m := range pathRE.FindAllStringSubmatch(svg, -1) {
				if strings.Contains(m[2], outline) && strings.Contains(m[2], "dasharray") {
					outlines++
				}
			}
			if outlines != c.flagged {
				t.Errorf("%d dashed outlines, want %d", outlines, c.flagged)
			}
			if got := strings.Count(svg, plots.FlagMark+" generator-late"); got != c.flagged {
				t.Errorf("%d cells name generator-late, want %d", got, c.flagged)
			}
			if c.flagged > 0 && !strings.Contains(svg, "unsent 42361") {
				t.Error("the flagged cell does not say what was unsent")
			}
		})
	}
}

// --slo colours by the objective and names the cheapest run that meets it by cost per message,
// saying so when that run is flagged, and the cheapest trusted one beside it.
func TestSLORanksByCostAndSaysFlagged(t *testing.T) {
	runs, _ := flaggedMatrix()
	// Engine CPU per message: the flagged redis none the cheapest, server snapshot next.
	for i, r := range runs {
		r.Result.Engine.Stats = map[string]int64{"proc_cpu_ns": int64(1000*(i+1)) * r.Result.Summary.Ledger.Acked, "proc_rss_bytes": 1 << 20}
	}
	runs[0].Result.Summary.Latency["e2e"] = results.Latency{P99: 900_000, Count: 4000} // flagged, yet meets it
	slo, err := plots.ParseSLOs([]string{"e2e.p99<=1.3ms"})
	if err != nil {
		t.Fatal(err)
	}
	got := slo.Verdict(runs)
	for _, want := range []string{"Cheapest meeting e2e.p99<=1.3ms: redis none at 1us engine CPU per message",
		plots.WarnSign + " flagged (generator-late, unsent)", "the cheapest trusted run is redis snapshot at 2us engine"} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict %q lacks %q", got, want)
		}
	}
	if got := slo.Verdict(runs[:1]); !strings.Contains(got, "no trusted run meets it") {
		t.Errorf("only a flagged run meets it, and the verdict %q does not say no trusted one does", got)
	}
	ranked := slo.Rank(runs)
	for i := 1; i < len(ranked); i++ {
		if ranked[i].Cost.NsPerMsg < ranked[i-1].Cost.NsPerMsg {
			t.Errorf("rank %d (%s) cheaper than rank %d", i+1, ranked[i].Label, i)
		}
	}
	html := writeMatrixReportWith(t, runs, slo)
	for _, want := range []string{`id="cheapest"`, `class="meets"`, `class="misses"`, "(#1)", "the cheapest trusted run"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func writeMatrixReportWith(t *testing.T, runs []plots.Run, slo plots.SLO) string {
	t.Helper()
	var b bytes.Buffer
	if err := plots.WriteReport(&b, runs, plots.ReportOptions{SLO: slo, Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestParseSLOs(t *testing.T) {
	for _, c := range []struct {
		in  []string
		err string
	}{
		{[]string{"e2e.p99<=10ms", "lost == 0"}, ""},
		{[]string{"e2e.p99 <= +10%"}, "absolute bound"},
		{[]string{"nosuch.p99 <= 1ms"}, "nosuch"},
		{[]string{"e2e.p99"}, "want METRIC OP VALUE"},
	} {
		t.Run(strings.Join(c.in, ","), func(t *testing.T) {
			s, err := plots.ParseSLOs(c.in)
			if c.err == "" {
				if err != nil || len(s.Gates) != len(c.in) {
					t.Fatalf("%v, %d gates", err, len(s.Gates))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
		})
	}
}

// gridSpan is the left and right of a chart's plot area as its SVG draws it: the horizontal
// grid lines (gonum's grey, 0.25 wide) run from one side of the data area to the other.
func gridSpan(svg []byte) (left, right float64, ok bool) {
	left, right = math.Inf(1), math.Inf(-1)
	for _, m := range pathRE.FindAllStringSubmatch(string(svg), -1) {
		if m[2] != "fill:none;stroke:#808080;stroke-width:0.25" {
			continue
		}
		pts := pathPoints(m[1])
		if len(pts) == 2 && math.Abs(pts[0].Y-pts[1].Y) < 1e-6 {
			left, right = math.Min(left, math.Min(pts[0].X, pts[1].X)), math.Max(right, math.Max(pts[0].X, pts[1].X))
			ok = true
		}
	}
	return left, right, ok
}

// The charts over time share one time axis: the same x range, and plot areas with the same left
// and right edges in the SVG (the y axes padded to the widest one's labels), with few runs
// (legends inside) and with five (legends in a column outside).
func TestStackedChartsShareTheTimeAxis(t *testing.T) {
	runs, _ := flaggedMatrix()
	runs = append(runs, faultedRun())
	for _, n := range []int{2, 5} {
		charts, err := plots.All(runs[len(runs)-n:])
		if err != nil {
			t.Fatal(err)
		}
		var spans [][2]float64
		var xmax []float64
		for _, c := range charts {
			if !strings.HasPrefix(c.Name, "latency-") && !strings.HasPrefix(c.Name, "throughput") && !strings.HasPrefix(c.Name, "lag") {
				continue
			}
			l, r, ok := gridSpan(renderSVG(t, c))
			if !ok {
				t.Fatalf("%s: no grid lines in the SVG", c.Name)
			}
			spans = append(spans, [2]float64{l, r})
			xmax = append(xmax, c.Plot.X.Max)
			a := plots.PlotArea(c)
			if math.Abs(float64(a.Min.X)-l) > 0.5 || math.Abs(float64(a.Max.X)-r) > 0.5 {
				t.Errorf("%d runs, %s: PlotArea %v..%v, SVG grid %.1f..%.1f", n, c.Name, a.Min.X, a.Max.X, l, r)
			}
		}
		if len(spans) < 5 {
			t.Fatalf("%d runs: only %d charts over time", n, len(spans))
		}
		for i := range spans {
			if math.Abs(spans[i][0]-spans[0][0]) > 0.1 || math.Abs(spans[i][1]-spans[0][1]) > 0.1 || xmax[i] != xmax[0] {
				t.Errorf("%d runs: chart %d's plot area %.1f..%.1f (x to %.2fs), chart 0's %.1f..%.1f (x to %.2fs)", n, i, spans[i][0], spans[i][1], xmax[i], spans[0][0], spans[0][1], xmax[0])
			}
		}
	}
}

// Beyond eight runs, each chart over time is small multiples: one small chart per run in a
// grid, all on one y range; the spectrum and the loss bars stay one chart.
func TestSmallMultiplesBeyondEightRuns(t *testing.T) {
	runs, _ := flaggedMatrix()
	runs = append(runs, faultedRun())
	charts, err := plots.All(runs)
	if err != nil {
		t.Fatal(err)
	}
	multiples := 0
	for _, c := range charts {
		if len(c.Panels) == 0 {
			if strings.HasPrefix(c.Name, "latency-") || strings.HasPrefix(c.Name, "throughput") {
				t.Errorf("%s: one chart of nine runs' lines, want small multiples", c.Name)
			}
			continue
		}
		multiples++
		if len(c.Panels) != 9 {
			t.Errorf("%s: %d small charts, want 9", c.Name, len(c.Panels))
		}
		for i, p := range c.Panels[1:] {
			if p.Y.Min != c.Panels[0].Y.Min || p.Y.Max != c.Panels[0].Y.Max || p.X.Max != c.Panels[0].X.Max {
				t.Errorf("%s: small chart %d on its own axes", c.Name, i+1)
			}
		}
		if !strings.Contains(c.Panels[0].Title.Text, plots.FlagMark) {
			t.Errorf("%s: the flagged run's small chart is titled %q, without %s", c.Name, c.Panels[0].Title.Text, plots.FlagMark)
		}
		svg := renderSVG(t, c)
		for i := range runs {
			if solid, _ := svgLines(svg, plots.Colour(i)); len(solid) == 0 && c.Name != "lag" {
				t.Errorf("%s: run %d's colour is not drawn", c.Name, i)
			}
		}
	}
	if multiples < 5 {
		t.Errorf("%d charts of small multiples, want the 5 charts over time", multiples)
	}
}

// The capacity question's charts: the throughput chart draws each run's offered rate dotted, and
// the p99 against the offered rate has one line per design from a matrix sweeping rate, and one
// from a profiled run's seconds.
func TestLatencyAgainstOfferedRate(t *testing.T) {
	var runs []plots.Run
	for _, design := range []string{"list", "stream"} {
		for _, rate := range []int{500, 1000, 2000, 4000} {
			r := makeRun(design, rate)
			runs = append(runs, plots.Run{Label: design + " " + strconv.Itoa(rate), Result: r})
		}
	}
	ramp := makeRun("stream", 1000)
	for k := range ramp.Series {
		ramp.Series[k].Offered = int64(500 * (k + 1))
	}
	runs = append(runs, plots.Run{Label: "ramp", Result: ramp})
	c, ok, err := plots.LatencyVsOffered(runs, "e2e")
	if err != nil || !ok {
		t.Fatalf("no chart: %v", err)
	}
	svg := renderSVG(t, c)
	for _, want := range []string{">list<", ">stream<", ">ramp<", "offered messages per second"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("chart lacks %q", want)
		}
	}
	// The list line goes through its four rates, left to right.
	solid, _ := svgLines(svg, plots.Colour(0))
	if len(solid) != 1 || len(solid[0]) != 4 || !(solid[0][0].X < solid[0][1].X && solid[0][1].X < solid[0][2].X && solid[0][2].X < solid[0][3].X) {
		t.Errorf("list's line: %v", solid)
	}
	if _, ok, _ := plots.LatencyVsOffered(runs[:1], "e2e"); ok {
		t.Error("a chart of one run at one rate")
	}
	// The highest offered rate meeting an objective, per design; the ramp is no design at rates.
	for _, c := range []struct{ slo, want string }{
		{"e2e.p99<=10s", "list: 4000 msg/s|stream: 4000 msg/s"},
		{"e2e.p99<=1us", "list: no rate met it|stream: no rate met it"},
	} {
		slo, err := plots.ParseSLOs([]string{c.slo})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(slo.Capacity(runs), "|"); got != c.want {
			t.Errorf("%s: capacity %q, want %q", c.slo, got, c.want)
		}
	}
	th, err := plots.Throughput(runs[:2])
	if err != nil {
		t.Fatal(err)
	}
	tsvg := renderSVG(t, th)
	if !bytes.Contains(tsvg, []byte("offered (dotted)")) {
		t.Error("the throughput chart's legend lacks the offered line")
	}
	if strings.Count(string(tsvg), "stroke-dasharray:1,3") < 3 {
		t.Error("no dotted offered lines on the throughput chart")
	}
	// Rate axes are whole numbers.
	if m := regexp.MustCompile(`>\d+\.\d+<`).FindString(string(tsvg)); m != "" {
		t.Errorf("the throughput axis has a decimal label %s", m)
	}
}

// An empty lag or loss chart is one line of text in the report, not an empty axis.
func TestEmptyChartsAreOneLine(t *testing.T) {
	runs := fixtureRuns()[1:] // no fault: no lag, no loss... but duplicates
	runs[0].Result.Summary.Ledger.Duplicates = 0
	var b bytes.Buffer
	if err := plots.WriteReport(&b, runs, plots.ReportOptions{Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<p class="empty-chart"><strong>no message lost or duplicated in any run:</strong> No message lost or duplicated in any run.</p>`,
		"No consumer lag in any run"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func makeRun(design string, rate int) *results.Result {
	r := resultstest.Make(resultstest.Options{Name: "rates/" + design, Design: design, Seed: uint64(rate), Seconds: 4, Warmup: 1,
		Rate: rate, ProduceMedian: time.Duration(rate) * time.Microsecond / 4})
	for k := range r.Series {
		r.Series[k].Offered = int64(rate)
	}
	return r
}

// The knee, where a profiled run first broke its objective, is in the decision table and the
// summary table: the offered rate there and when; "not reached" for a run that held.
func TestKneeInTheTables(t *testing.T) {
	runs := fixtureRuns()
	runs[0].Result.Summary.Knee = &results.Knee{Objective: "produce.p99 <= 5ms", Reached: true, AtSeconds: 1, OfferedRate: 4571, ProduceRate: 4400}
	runs[1].Result.Summary.Knee = &results.Knee{Objective: "produce.p99 <= 5ms"}
	var b bytes.Buffer
	if err := plots.WriteReport(&b, runs, plots.ReportOptions{Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for want, n := range map[string]int{"<th>knee</th>": 2, ">4571/s offered (at 1.0s)<": 2, ">not reached<": 2} {
		if got := strings.Count(html, want); got != n {
			t.Errorf("%q %d times, want %d", want, got, n)
		}
	}
}
