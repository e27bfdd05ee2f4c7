package plots

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SmallMultiplesAbove is the number of runs above which a chart over time is drawn as small
// multiples, one small chart per run in a grid, every one on the same axes, instead of one
// chart of many overlaid lines that no one can follow.
const SmallMultiplesAbove = 8

// multiplesCols is the grid's width in charts.
const multiplesCols = 3

// panelHeight is one small chart's height.
const panelHeight = 2.1 * vg.Inch

// overTime draws a chart over time of the runs: f of them all, or with more than
// SmallMultiplesAbove runs, small multiples.
func overTime(runs []Run, f func([]Run) (Chart, error)) (Chart, error) {
	if len(runs) > SmallMultiplesAbove {
		return smallMultiples(runs, f)
	}
	return f(runs)
}

// smallMultiples draws f once per run, each run alone in its own colour, titled by its label
// (with FlagMark when flagged), on one x and one y range, in a grid of multiplesCols columns.
func smallMultiples(runs []Run, f func([]Run) (Chart, error)) (Chart, error) {
	var panels []*plot.Plot
	var first Chart
	var xlabel string
	empty := true
	for i, run := range runs {
		one := run
		one.colour = colourOf(i, run) + 1
		c, err := f([]Run{one})
		if err != nil {
			return Chart{}, err
		}
		if i == 0 {
			first, xlabel = c, c.Plot.X.Label.Text
		}
		empty = empty && c.Empty != ""
		p := c.Plot
		p.Title.Text = legendLabel(run)
		p.Title.TextStyle.Font.Size = vg.Points(10)
		p.Legend = plot.NewLegend() // the chart's title says what the strokes are
		p.X.Label.Text, p.Y.Label.Text = "", ""
		panels = append(panels, p)
	}
	if empty && first.Empty != "" {
		return first, nil // one line of text says it for every run
	}
	// One range for all: the same height means the same latency or rate in every small chart.
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range panels {
		xmin, xmax = math.Min(xmin, p.X.Min), math.Max(xmax, p.X.Max)
		ymin, ymax = math.Min(ymin, p.Y.Min), math.Max(ymax, p.Y.Max)
	}
	// The same room above each plot area (a run's fault lanes, FaultLanes), so every plot area
	// has one height.
	var pad vg.Length
	for _, p := range panels {
		pad = max(pad, p.Title.Padding)
	}
	for _, p := range panels {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
		p.Title.Padding = pad
	}
	rows := (len(panels) + multiplesCols - 1) / multiplesCols
	return Chart{Name: first.Name, Title: first.Title, Panels: panels, Cols: multiplesCols,
		XLabel: xlabel, W: Width, H: vg.Length(rows)*panelHeight + vg.Inch/2}, nil
}

// drawMultiples draws a chart of small multiples: its title on top, the small charts aligned in
// a grid below (plot.Align: every plot area the same size), the x axis's label at the bottom.
func drawMultiples(c Chart, dc draw.Canvas) {
	title := plot.New().Title.TextStyle
	title.XAlign, title.YAlign = draw.XCenter, draw.YTop
	dc.FillText(title, vg.Point{X: dc.Center().X, Y: dc.Max.Y - 2}, c.Title)
	top := title.Rectangle(c.Title).Size().Y + 8
	label := plot.New().X.Label.TextStyle
	label.XAlign, label.YAlign = draw.XCenter, draw.YBottom
	dc.FillText(label, vg.Point{X: dc.Center().X, Y: dc.Min.Y + 2}, c.XLabel+" (every small chart on the same axes)")
	bottom := label.Rectangle(c.XLabel).Size().Y + 6
	rows := (len(c.Panels) + c.Cols - 1) / c.Cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, c.Cols)
	}
	for i, p := range c.Panels {
		grid[i/c.Cols][i%c.Cols] = p
	}
	t := draw.Tiles{Rows: rows, Cols: c.Cols, PadX: vg.Points(6), PadY: vg.Points(6), PadTop: top, PadBottom: bottom, PadLeft: 2, PadRight: 4}
	cs := plot.Align(grid, t, dc)
	for i, p := range c.Panels {
		p.Draw(cs[i/c.Cols][i%c.Cols])
	}
}
