// Package plots draws charts of result files with gonum.org/v1/plot, and the HTML report that
// gathers them. It reads results only; it never runs anything.
package plots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"qbench/results"
)

// Run is one result with the label it has in legends.
type Run struct {
	Label  string
	Result *results.Result
	// colour, when above 0, is 1 + the run's colour index: a small multiple draws one run
	// alone in the colour it has among all the runs.
	colour int
}

// colourOf is the colour index of run, the i-th of the runs a chart draws.
func colourOf(i int, run Run) int {
	if run.colour > 0 {
		return run.colour - 1
	}
	return i
}

// Chart is one plot with its file name (without extension) and size.
type Chart struct {
	Name  string
	Title string
	Plot  *plot.Plot
	W, H  vg.Length
	// LegendOutside draws the legend in a column right of the plot area (Render), where it
	// cannot hide data: for charts with more than LegendInside runs.
	LegendOutside bool
	// Empty, when set, says in one line that the chart has nothing to show ("no message lost or
	// duplicated in any run"): the report prints it instead of an empty axis.
	Empty string
	// Panels, when set, make the chart small multiples (multiples.go): one small plot per run,
	// Cols to a row, with the x axis's label XLabel under them all; Plot is then nil.
	Panels []*plot.Plot
	Cols   int
	XLabel string
	// LegendWidth, when set, is the legend column's width (AlignTimeCharts gives stacked charts
	// one, so their plot areas end at the same x); 0 fits the column to the legend.
	LegendWidth vg.Length
	// rightPad narrows the plot area from the right (AlignTimeCharts: the x axis's last tick
	// label can push one chart's plot area a little further in than another's).
	rightPad vg.Length
}

// LegendInside is how many runs a legend may list inside the plot area.
const LegendInside = 4

// newChart is a chart of the default size whose legend lists runs entries.
func newChart(name string, p *plot.Plot, runs int) Chart {
	return Chart{Name: name, Title: p.Title.Text, Plot: p, W: Width, H: Height, LegendOutside: runs > LegendInside}
}

// Strokes tell a run's series apart within its colour.
type stroke int

const (
	solid stroke = iota
	dashed
	dotted
)

// strokes is the usual order: the main series solid, the second dashed, the third dotted.
var strokes = []stroke{solid, dashed, dotted}

// addLine draws pts (if any) in run's colour with the stroke, and lists it in the legend under
// label unless label is empty.
func addLine(p *plot.Plot, pts plotter.XYs, run int, s stroke, label string) error {
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = Colour(run)
	l.Width = LineWidth
	switch s {
	case dashed:
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	case dotted:
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		l.Width = 1
	}
	p.Add(l)
	if label != "" {
		p.Legend.Add(fitLegendLabel(p, label), l)
	}
	return nil
}

func legendIf(ok bool, label string) string {
	if ok {
		return label
	}
	return ""
}

// Default chart size.
const (
	Width  = 8 * vg.Inch
	Height = 4.5 * vg.Inch
)

// LineWidth is thick enough for a test to find a run's colour in the PNG.
const LineWidth = vg.Length(1.6)

// Colour returns run i's colour, the same in every chart.
func Colour(i int) color.Color { return runColour(i) }

// Fault is a fault window from the scenario as run.
type Fault struct {
	Kind     string
	At       time.Duration
	Duration time.Duration
}

// Faults reads the fault windows of a result's scenario. The result carries the scenario as
// JSON, and this package does not import scenarios.
func Faults(r *results.Result) ([]Fault, error) {
	var sc struct {
		Faults []struct {
			At       string `json:"at"`
			Kind     string `json:"kind"`
			Duration string `json:"duration"`
		} `json:"faults"`
	}
	if len(r.Scenario) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(r.Scenario, &sc); err != nil {
		return nil, fmt.Errorf("reading faults from the scenario: %w", err)
	}
	var out []Fault
	for _, f := range sc.Faults {
		at, err := time.ParseDuration(f.At)
		if err != nil {
			return nil, fmt.Errorf("fault at %q: %w", f.At, err)
		}
		var d time.Duration
		if f.Duration != "" && f.Duration != "0s" {
			if d, err = time.ParseDuration(f.Duration); err != nil {
				return nil, fmt.Errorf("fault duration %q: %w", f.Duration, err)
			}
		}
		out = append(out, Fault{Kind: f.Kind, At: at, Duration: d})
	}
	return out, nil
}

// Warmup reads the scenario's warm-up.
func Warmup(r *results.Result) time.Duration {
	var sc struct {
		Warmup string `json:"warmup"`
	}
	if json.Unmarshal(r.Scenario, &sc) != nil {
		return 0
	}
	d, _ := time.ParseDuration(sc.Warmup)
	return d
}

// Options tune the charts.
type Options struct {
	// BinBy is latency over time's clock: results.BinByCompleted (the default: when each
	// latency was seen) or results.BinByIntended (when the schedule meant to send the message).
	BinBy string
}

// All draws every chart for the runs with the default options.
func All(runs []Run) ([]Chart, error) { return AllWith(runs, Options{}) }

// AllWith draws every chart for the runs: a percentile spectrum and latency over time per
// latency kind, throughput in messages and in bytes, lag (and lag per group, when a run has
// several receiving groups), and loss and duplicates.
func AllWith(runs []Run, o Options) ([]Chart, error) {
	var out []Chart
	for _, k := range results.LatencyKinds {
		c, err := Spectrum(runs, k)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, k := range results.LatencyKinds {
		c, err := overTime(runs, func(rs []Run) (Chart, error) { return LatencyOverTime(rs, k, o.BinBy) })
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	charts := []func([]Run) (Chart, error){Throughput, ThroughputBytes, Lag}
	if hasGroups(runs) {
		charts = append(charts, GroupLag)
	}
	for _, f := range charts {
		c, err := overTime(runs, f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, f := range []func([]Run) (Chart, error){Loss} {
		c, err := f(runs)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, k := range []string{"e2e", "produce"} {
		c, ok, err := LatencyVsOffered(runs, k)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
		}
	}
	AlignTimeCharts(out)
	return out, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	return p
}

// Nines is the x position of a percentile on the "nines" axis: 90% is 1, 99% is 2, 99.9% is 3.
func Nines(percentile float64) float64 { return -math.Log10(1 - percentile/100) }

// ninesTicks label the nines axis in percentiles.
type ninesTicks struct{}

func (ninesTicks) Ticks(min, max float64) []plot.Tick {
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%"}
	var ts []plot.Tick
	for i := 0; i < len(labels) && float64(i) <= max+1e-9; i++ {
		ts = append(ts, plot.Tick{Value: float64(i), Label: labels[i]})
		if i+1 < len(labels) {
			// Minor ticks at 50%, 95%, 99.5% ...: half-way in percent, not in nines.
			ts = append(ts, plot.Tick{Value: float64(i) + math.Log10(2)})
		}
	}
	return ts
}

// msTicks are log ticks labelled as durations.
type msTicks struct{}

func (msTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.LogTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = time.Duration(math.Round(ts[i].Value * 1e6)).String()
		}
	}
	return ts
}

// logRange widens a log axis to whole decades, so that both ends carry a labelled tick.
func logRange(a *plot.Axis) {
	if a.Min > 0 && a.Max > 0 && !math.IsInf(a.Min, 0) && !math.IsInf(a.Max, 0) {
		a.Min = math.Pow10(int(math.Floor(math.Log10(a.Min))))
		a.Max = math.Pow10(int(math.Ceil(math.Log10(a.Max))))
	}
}

// mid is the middle of series entry i in seconds since the start: a second's figures are drawn
// at the middle of the second they describe.
func mid(r *results.Result, i int) float64 {
	start := float64(r.Series[i].StartNs) / 1e9
	end := start + 1
	if i+1 < len(r.Series) {
		end = float64(r.Series[i+1].StartNs) / 1e9
	} else if e := runEnd(r).Seconds(); e > start && e < start+1 {
		end = e
	}
	return (start + end) / 2
}

// Spectrum is the latency percentile spectrum of one latency kind, every run overlaid, on the
// logarithmic "nines" axis so that the tail gets as much room as the median.
func Spectrum(runs []Run, kind string) (Chart, error) {
	p := newPlot(kind+" latency by percentile", "percentile", "latency")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = msTicks{}
	p.X.Tick.Marker = ninesTicks{}
	p.Legend.Left = true // the curves rise to the right; the top left is free
	var any bool
	for i, run := range runs {
		h, err := run.Result.Histogram(kind)
		if err != nil {
			return Chart{}, fmt.Errorf("%s: %w", run.Label, err)
		}
		if h.TotalCount() == 0 {
			continue
		}
		var pts plotter.XYs
		// The last percentile that the count of values can show: 1/count from the top.
		top := math.Log10(float64(h.TotalCount()))
		for _, b := range h.CumulativeDistributionWithTicks(5) {
			x := top
			if b.Quantile < 100 {
				x = math.Min(Nines(b.Quantile), top)
			}
			pts = append(pts, plotter.XY{X: x, Y: math.Max(float64(b.ValueAt), 1) / 1e6})
		}
		if err := addLine(p, pts, colourOf(i, run), solid, legendLabel(run)); err != nil {
			return Chart{}, err
		}
		any = true
	}
	if !any {
		noData(p)
	} else {
		logRange(&p.Y)
	}
	p.X.Min = 0
	return newChart("spectrum-"+kind, p, len(runs)), nil
}

// Throughput shows acknowledged messages per second (solid) and deliveries per second per
// consumer group (dashed) for every run: a pub/sub run with five subscribers delivers each message
// five times, and unnormalised its curve would flatten every other run's. A run with sub-second
// latency bins (it had faults) is drawn from them, so a stall shows as the drop it was.
func Throughput(runs []Run) (Chart, error) {
	p := newPlot("throughput (acked solid, delivered per consumer group dashed)", "seconds since start", "messages per second")
	if err := shadeWindows(p, runs); err != nil {
		return Chart{}, err
	}
	fine, offered := false, false
	for i, run := range runs {
		groups := int64(max(1, run.Result.Summary.Groups))
		acked, delivered, ok := BinnedRates(run.Result, groups)
		if !ok {
			acked = perSecond(run.Result, func(iv results.Interval) int64 { return iv.Acked })
			delivered = perSecond(run.Result, func(iv results.Interval) int64 { return iv.Deliveries / groups })
		}
		fine = fine || ok
		for j, pts := range []plotter.XYs{acked, delivered} {
			if err := addLine(p, pts, colourOf(i, run), strokes[j], legendIf(j == 0, legendLabel(run))); err != nil {
				return Chart{}, err
			}
		}
		had, err := offeredLine(p, run.Result, colourOf(i, run))
		if err != nil {
			return Chart{}, err
		}
		offered = offered || had
	}
	if offered {
		if err := offeredLegend(p); err != nil {
			return Chart{}, err
		}
	}
	if fine {
		p.Title.Text = "throughput (acked solid, delivered per consumer group dashed; runs with faults in sub-second bins)"
	}
	if offered {
		p.Title.Text = strings.Replace(p.Title.Text, " dashed", " dashed, offered dotted", 1)
	}
	p.Y.Min = 0
	p.Y.Tick.Marker = intTicks{}
	return newChart("throughput", p, len(runs)), nil
}

// perSecond turns a counter of each interval into a rate, so a short last interval is not
// drawn as a drop.
func perSecond(r *results.Result, get func(results.Interval) int64) plotter.XYs {
	var pts []ratePoint
	for i, iv := range r.Series {
		length := 1.0
		if i+1 < len(r.Series) {
			length = float64(r.Series[i+1].StartNs-iv.StartNs) / 1e9
		} else if end := runEnd(r).Seconds() - float64(iv.StartNs)/1e9; end > 0 && end < 1 {
			length = end // the last, partial interval ends when the consumers stopped
		}
		if length < 0.05 {
			continue
		}
		pts = append(pts, ratePoint{start: float64(iv.StartNs) / 1e9, length: length, count: float64(get(iv))})
	}
	return stepRates(pts, stepOf(r)) // a long run in steps (timeaxis.go)
}

// Lag shows the consumer lag over time: as the load generator sees it (acked, not yet
// delivered; solid) and as the engine reports it (backlog plus pending; dashed), from the
// per-second readings and, around faults, the 100 ms ones (LagPoints).
func Lag(runs []Run) (Chart, error) {
	p := newPlot("consumer lag (load generator solid, engine dashed)", "seconds since start", "messages")
	if err := shadeWindows(p, runs); err != nil {
		return Chart{}, err
	}
	var peak float64
	for i, run := range runs {
		own, eng := LagPoints(run.Result)
		step := stepOf(run.Result) // a long run's largest reading per step (timeaxis.go)
		own, eng = stepMax(own, step), stepMax(eng, step)
		for _, pt := range append(append(plotter.XYs{}, own...), eng...) {
			peak = max(peak, pt.Y)
		}
		for j, pts := range []plotter.XYs{own, eng} {
			if err := addLine(p, pts, colourOf(i, run), strokes[j], legendIf(j == 0, legendLabel(run))); err != nil {
				return Chart{}, err
			}
		}
	}
	p.Y.Min = 0
	p.Y.Tick.Marker = intTicks{}
	c := newChart("lag", p, len(runs))
	if peak == 0 {
		c.Empty = "No consumer lag in any run: every reading, the load generator's and the engine's, was 0."
	}
	return c, nil
}

// LagPoints is r's lag readings in time order, the load generator's and the engine's: each
// per-second reading where the sampler took it (the end of its interval) and every sub-second
// sample, so a backlog that built and drained within a second stands at its height.
func LagPoints(r *results.Result) (own, eng plotter.XYs) {
	type reading struct {
		x      float64
		lag    int64
		engine *results.EngineLag
	}
	var all []reading
	for i, iv := range r.Series {
		end := float64(iv.StartNs)/1e9 + 1
		if i+1 < len(r.Series) {
			end = float64(r.Series[i+1].StartNs) / 1e9
		} else if e := runEnd(r).Seconds(); e > float64(iv.StartNs)/1e9 && e < end {
			end = e
		}
		all = append(all, reading{end, iv.Lag, iv.EngineLag})
	}
	for _, s := range r.LagSamples {
		all = append(all, reading{x: float64(s.AtNs) / 1e9, lag: s.Lag, engine: s.EngineLag})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].x < all[j].x })
	for _, rd := range all {
		own = append(own, plotter.XY{X: rd.x, Y: float64(rd.lag)})
		if rd.engine != nil {
			eng = append(eng, plotter.XY{X: rd.x, Y: float64(rd.engine.Total())})
		}
	}
	return own, eng
}

// Loss shows lost and duplicated messages per run as bars.
func Loss(runs []Run) (Chart, error) {
	p := newPlot("lost and duplicated messages", "", "messages")
	lost, dups := make(plotter.Values, len(runs)), make(plotter.Values, len(runs))
	var labels []string
	for i, run := range runs {
		lost[i] = float64(run.Result.Summary.Ledger.Lost)
		dups[i] = float64(run.Result.Summary.Ledger.Duplicates)
		labels = append(labels, legendLabel(run))
	}
	w := vg.Points(20)
	for j, v := range []struct {
		name string
		vals plotter.Values
		clr  color.Color
	}{
		{"lost", lost, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
		{"duplicates", dups, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
	} {
		b, err := plotter.NewBarChart(v.vals, w)
		if err != nil {
			return Chart{}, err
		}
		b.Color = v.clr
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(j)-0.5) * w
		p.Add(b)
		p.Legend.Add(v.name, b)
	}
	p.NominalX(labels...)
	if len(labels) > 4 {
		// Many runs: upright labels would run into each other; stand them on end.
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	p.Y.Min = 0
	var total float64
	for i := range lost {
		total += lost[i] + dups[i]
	}
	if total == 0 {
		// An empty axis reads as "no data"; say what it means.
		p.Title.Text = "no message lost or duplicated in any run"
	} else if err := barValues(p, lost, dups, w); err != nil {
		return Chart{}, err
	}
	if p.Y.Max < 1 {
		p.Y.Max = 1 // all zero: still draw an axis that says so
	}
	c := newChart("loss", p, 0)
	if total == 0 {
		c.Empty = "No message lost or duplicated in any run."
	} else {
		p.Y.Tick.Marker = intTicks{}
	}
	return c, nil
}

// barValues writes each non-zero bar's value above it: lost half a bar left of the run's tick,
// duplicates half a bar right, as the bars are drawn.
func barValues(p *plot.Plot, lost, dups plotter.Values, w vg.Length) error {
	maxV := 0.0
	for i := range lost {
		maxV = math.Max(maxV, math.Max(lost[i], dups[i]))
	}
	style := plot.New().X.Tick.Label // the default tick label font
	style.XAlign, style.YAlign = draw.XCenter, draw.YBottom
	p.Add(barLabels{vals: lost, dx: -w / 2, style: style}, barLabels{vals: dups, dx: w / 2, style: style})
	p.Y.Max = math.Max(p.Y.Max, maxV*1.12) // room for the labels above the tallest bar
	return nil
}

// barLabels draws the values of one bar series above its bars.
type barLabels struct {
	vals  plotter.Values
	dx    vg.Length
	style text.Style
}

func (b barLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.vals {
		if v == 0 {
			continue
		}
		c.FillText(b.style, vg.Point{X: trX(float64(i)) + b.dx, Y: trY(v) + vg.Points(2)}, fmt.Sprintf("%.0f", v))
	}
}

// shade is a vertical band across the whole plot, from X0 to X1.
type shade struct {
	X0, X1 float64
	Colour color.Color
	// MinWidth widens a band narrower than it on the canvas (an instant fault).
	MinWidth vg.Length
}

func (s shade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := trX(s.X0), trX(s.X1)
	if x1-x0 < s.MinWidth {
		x1 = x0 + s.MinWidth
	}
	pts := []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}}
	c.FillPolygon(s.Colour, c.ClipPolygonX(pts))
}

// DataRange keeps a window visible even where no data reaches it; Y is left to the data.
func (s shade) DataRange() (xmin, xmax, ymin, ymax float64) {
	return s.X0, s.X1, math.Inf(1), math.Inf(-1)
}

func (s shade) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(s.Colour, pts)
}

// Shade colours: fault windows red, warm-up grey.
var (
	FaultColour  = color.NRGBA{R: 0xe0, G: 0x40, B: 0x40, A: 0x40}
	WarmupColour = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x28}
)

func noData(p *plot.Plot) {
	p.Title.Text += " (no data)"
	p.Y.Scale = plot.LinearScale{}
	p.Y.Tick.Marker = plot.DefaultTicks{}
	p.Y.Min, p.Y.Max = 0, 1
}

// Render draws a chart in a format gonum/plot knows: png, svg, pdf.
func Render(c Chart, format string) ([]byte, error) {
	cv, err := draw.NewFormattedCanvas(c.W, c.H, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(cv)
	if len(c.Panels) > 0 {
		drawMultiples(c, dc)
	} else if c.LegendOutside {
		drawLegendOutside(c.Plot, dc, legendColumn(c), c.rightPad)
	} else {
		c.Plot.Draw(draw.Crop(dc, 0, -c.rightPad, 0, 0))
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// drawLegendOutside draws p in the canvas less a right-hand column as wide as the legend, and
// the legend at the top of that column, below the title's height.
func drawLegendOutside(p *plot.Plot, dc draw.Canvas, w, rightPad vg.Length) {
	leg := p.Legend
	leg.Top, leg.Left = true, true
	gap := legendGap
	inner := *p
	inner.Legend = plot.NewLegend() // no entries: the plot itself draws none
	inner.Draw(draw.Crop(dc, 0, -w-rightPad, 0, 0))
	top := vg.Length(0)
	if p.Title.Text != "" {
		top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	leg.Draw(draw.Crop(dc, dc.Size().X-w+gap/2, 0, 0, -top))
}

// Save writes each chart in each format into dir and returns the paths written.
func Save(charts []Chart, dir string, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, c := range charts {
		for _, f := range formats {
			b, err := Render(c, f)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", c.Name, f, err)
			}
			p := filepath.Join(dir, c.Name+"."+strings.ToLower(f))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}
