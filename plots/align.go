package plots

import (
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// isTimeChart says whether a chart's x axis is seconds since the start: the charts a report
// stacks one above the other, which must read as one time axis.
func isTimeChart(name string) bool {
	for _, p := range []string{"latency-", "throughput", "lag"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// AlignTimeCharts gives the stacked time charts one time axis: the same x range (0 to the
// latest end of any of them), the same legend column (the widest one's, when legends stand
// outside), and the same plot area's left and right edges, by padding each y axis to the widest
// one's tick labels. A spike at 4.2 s then stands at the same place on every chart.
func AlignTimeCharts(charts []Chart) {
	timeAxes(charts) // minutes or hours for a long run (timeaxis.go)
	alignMultiples(charts)
	var idx []int
	xmax := 0.0
	var legendW vg.Length
	for i, c := range charts {
		if !isTimeChart(c.Name) || c.Plot == nil || len(c.Panels) > 0 {
			continue
		}
		idx = append(idx, i)
		xmax = max(xmax, c.Plot.X.Max)
		if c.LegendOutside {
			legendW = max(legendW, legendColumn(c))
		}
	}
	if len(idx) < 2 {
		return
	}
	for _, i := range idx {
		p := charts[i].Plot
		p.X.Min, p.X.Max = 0, xmax
		if charts[i].LegendOutside {
			charts[i].LegendWidth = legendW
		}
	}
	// Pad every y axis to the widest one's: the plot area then starts at the same x. Then end
	// every plot area where the one that ends first does. Twice: gonum places the plot area
	// between the outermost glyphs, so each side moves the other a little.
	for range 2 {
		var widest vg.Length
		for _, i := range idx {
			widest = max(widest, PlotArea(charts[i]).Min.X)
		}
		for _, i := range idx {
			charts[i].Plot.Y.Padding += widest - PlotArea(charts[i]).Min.X
		}
		first := vg.Length(1e9)
		for _, i := range idx {
			first = min(first, PlotArea(charts[i]).Max.X)
		}
		for _, i := range idx {
			charts[i].rightPad += PlotArea(charts[i]).Max.X - first
		}
	}
}

// alignMultiples does for charts of small multiples what AlignTimeCharts does for single ones:
// one x range, and every small chart's y axis padded to the widest one's, so that plot.Align
// lays out the same columns in each chart.
func alignMultiples(charts []Chart) {
	var panels []*plot.Plot
	xmax := 0.0
	for _, c := range charts {
		if isTimeChart(c.Name) && len(c.Panels) > 0 {
			for _, p := range c.Panels {
				panels = append(panels, p)
				xmax = max(xmax, p.X.Max)
			}
		}
	}
	if len(panels) == 0 {
		return
	}
	dc := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: Width / multiplesCols, Y: panelHeight}}}
	left := func(p *plot.Plot) vg.Length { return p.DataCanvas(dc).Min.X }
	var widest vg.Length
	for _, p := range panels {
		p.X.Min, p.X.Max = 0, xmax
		widest = max(widest, left(p))
	}
	for _, p := range panels {
		p.Y.Padding += widest - left(p)
	}
}

// legendColumn is the width of the column right of the plot a chart's legend takes outside it.
func legendColumn(c Chart) vg.Length {
	if c.LegendWidth > 0 {
		return c.LegendWidth
	}
	dc := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: c.W, Y: c.H}}}
	return min(c.Plot.Legend.Rectangle(dc).Size().X+legendGap, dc.Size().X/3)
}

// PlotArea is the rectangle of a chart's data area on its canvas, in points from the bottom
// left, as Render draws it.
func PlotArea(c Chart) vg.Rectangle {
	dc := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: c.W, Y: c.H}}}
	right := c.rightPad
	if c.LegendOutside {
		right += legendColumn(c)
	}
	dc = draw.Crop(dc, 0, -right, 0, 0)
	return c.Plot.DataCanvas(dc).Rectangle
}
