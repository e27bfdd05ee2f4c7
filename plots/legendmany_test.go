package plots_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// With nine runs every chart with a legend of runs puts it outside the plot area, lists every
// run once, by its short label (the matrix's axis values) as given, and fits each label inside
// the canvas: the legend column is capped at a third of the width, and a label wider than that
// (a long file name) is shortened in its middle, not cut off at the right edge.
func TestEveryRunChartsLegendOutsideWithManyRuns(t *testing.T) {
	const long = "persistence-explorer-2026-12-01/engine=server,policy=aof-everysec,rate=1000.json"
	runs := append(matrixRuns(), plots.Run{Label: long, Result: resultstest.Make(resultstest.Options{Seed: 9, Seconds: 5, Warmup: 1})})
	// The long label's legend text keeps both of its ends.
	inLegend := func(text, label string) bool {
		if label != long {
			return text == label
		}
		head, tail, cut := strings.Cut(text, "…")
		return cut && len(head) >= 10 && len(tail) >= 10 && strings.HasPrefix(long, head) && strings.HasSuffix(long, tail)
	}
	charts := map[string]func() (plots.Chart, error){
		"throughput":     func() (plots.Chart, error) { return plots.Throughput(runs) },
		"lag":            func() (plots.Chart, error) { return plots.Lag(runs) },
		"spectrum-e2e":   func() (plots.Chart, error) { return plots.Spectrum(runs, "e2e") },
		"latency-e2e":    func() (plots.Chart, error) { return plots.LatencyOverTime(runs, "e2e", "") },
		"latency-by-int": func() (plots.Chart, error) { return plots.LatencyOverTime(runs, "produce", results.BinByIntended) },
	}
	textRE := regexp.MustCompile(`<text x="([-0-9.e]+)" y="[-0-9.e]+"[^>]*>([^<]*)</text>`)
	for name, mk := range charts {
		t.Run(name, func(t *testing.T) {
			ch, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			if !ch.LegendOutside {
				t.Fatal("legend inside the plot area with eight runs")
			}
			svg := renderSVG(t, ch)
			seen := map[string]int{}
			style := ch.Plot.Legend.TextStyle
			for _, m := range textRE.FindAllStringSubmatch(string(svg), -1) {
				for _, r := range runs {
					if !inLegend(m[2], r.Label) {
						continue
					}
					seen[r.Label]++
					x, _ := strconv.ParseFloat(m[1], 64)
					if right := x + style.Rectangle(m[2]).Size().X.Points(); right > ch.W.Points()+0.5 {
						t.Errorf("legend label %q ends at x=%.1f, beyond the canvas's %.1f", m[2], right, ch.W.Points())
					}
				}
			}
			for _, r := range runs {
				if seen[r.Label] != 1 {
					t.Errorf("run %q listed %d times in the legend, want once", r.Label, seen[r.Label])
				}
			}
		})
	}
}
