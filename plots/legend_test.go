package plots_test

import (
	"regexp"
	"strconv"
	"testing"

	"qbench/plots"
)

// With more than plots.LegendInside runs the legend stands in a column right of the plot area,
// where it hides no data; with few runs it stays inside. The check reads the SVG: every legend
// label's x is right of every tick label's (the x axis's last tick is the plot area's edge).
func TestLegendOutsideWithManyRuns(t *testing.T) {
	many := matrixRuns()
	few := many[:2]
	for _, c := range []struct {
		name    string
		runs    []plots.Run
		outside bool
	}{{"eight runs", many, true}, {"two runs", few, false}} {
		t.Run(c.name, func(t *testing.T) {
			ch, err := plots.Throughput(c.runs)
			if err != nil {
				t.Fatal(err)
			}
			if ch.LegendOutside != c.outside {
				t.Fatalf("LegendOutside %v, want %v", ch.LegendOutside, c.outside)
			}
			b := renderSVG(t, ch)
			xs := textX(string(b))
			maxTick, minLegend := -1.0, 1e9
			for text, x := range xs {
				isLabel := false
				for _, r := range c.runs {
					if r.Label == text {
						isLabel = true
					}
				}
				if isLabel {
					minLegend = min(minLegend, x)
				} else if _, err := strconv.Atoi(text); err == nil {
					maxTick = max(maxTick, x)
				}
			}
			if minLegend == 1e9 || maxTick < 0 {
				t.Fatalf("found no legend labels or no tick labels in the SVG: %v", xs)
			}
			if got := minLegend > maxTick; got != c.outside {
				t.Errorf("legend's leftmost label at x=%.1f, the rightmost tick label at x=%.1f: outside=%v, want %v", minLegend, maxTick, got, c.outside)
			}
		})
	}
}

// textX maps each SVG text to its x position (the last one wins for repeated texts).
func textX(svg string) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`<text x="([-0-9.e]+)" y="[-0-9.e]+"[^>]*>([^<]*)</text>`)
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		out[m[2]] = x
	}
	return out
}
