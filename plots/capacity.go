package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"qbench/results"
)

// CapacityPoint is one rate of a rate search.
type CapacityPoint struct {
	Offered, Achieved float64 // msg/s
	P50, P99          int64   // ns, of the chart's latency kind
	Pass              bool
}

// CapacityPoints reads the points of a rate search from its results.
func CapacityPoints(rs []*results.Result, pass []bool, kind string) []CapacityPoint {
	var pts []CapacityPoint
	for i, r := range rs {
		l := r.Summary.Latency[kind]
		pts = append(pts, CapacityPoint{Offered: r.Summary.OfferedRate, Achieved: r.Summary.ProduceRate, P50: l.P50, P99: l.P99, Pass: pass[i]})
	}
	return pts
}

// Capacity is the capacity curve of a rate search: p50 (dashed) and p99 (solid) of one latency
// kind against the achieved throughput, rates that met the objective as dots and those that
// missed as crosses, the objective's latency bound as a horizontal line (when it has one; 0
// otherwise) and the highest sustainable rate found as a vertical line.
func Capacity(points []CapacityPoint, kind string, objectiveNs int64, best float64) (Chart, error) {
	p := newPlot(kind+" latency against throughput (p50 dashed, p99 solid)", "achieved messages per second", "latency")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = msTicks{}
	pts := append([]CapacityPoint(nil), points...)
	sort.Slice(pts, func(i, j int) bool { return pts[i].Offered < pts[j].Offered })
	var p50, p99, ok, missed plotter.XYs
	for _, c := range pts {
		if c.P99 <= 0 {
			continue
		}
		p50 = append(p50, plotter.XY{X: c.Achieved, Y: math.Max(float64(c.P50), 1) / 1e6})
		xy := plotter.XY{X: c.Achieved, Y: float64(c.P99) / 1e6}
		p99 = append(p99, xy)
		if c.Pass {
			ok = append(ok, xy)
		} else {
			missed = append(missed, xy)
		}
	}
	if len(p99) == 0 {
		noData(p)
		return Chart{Name: "capacity-" + kind, Title: p.Title.Text, Plot: p, W: Width, H: Height}, nil
	}
	for i, line := range []plotter.XYs{p50, p99} {
		l, err := plotter.NewLine(line)
		if err != nil {
			return Chart{}, err
		}
		l.Color = Colour(0)
		l.Width = LineWidth
		if i == 0 {
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(l)
	}
	for _, m := range []struct {
		xys   plotter.XYs
		name  string
		shape draw.GlyphDrawer
		clr   color.Color
	}{
		{ok, "objective met", draw.CircleGlyph{}, color.RGBA{G: 0x80, A: 0xff}},
		{missed, "objective missed", draw.CrossGlyph{}, color.RGBA{R: 0xc0, A: 0xff}},
	} {
		if len(m.xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(m.xys)
		if err != nil {
			return Chart{}, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: m.clr, Radius: vg.Points(4), Shape: m.shape}
		p.Add(s)
		p.Legend.Add(m.name, s)
	}
	if objectiveNs > 0 {
		xmin, xmax := p.X.Min, p.X.Max
		l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: float64(objectiveNs) / 1e6}, {X: xmax, Y: float64(objectiveNs) / 1e6}})
		if err != nil {
			return Chart{}, err
		}
		l.Color = color.RGBA{R: 0xc0, A: 0xff}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		p.Legend.Add("objective "+results.FormatNs(objectiveNs), l)
	}
	logRange(&p.Y)
	if best > 0 {
		// Drawn at the throughput the best rate achieved, the x axis's measure.
		x := best
		for _, c := range pts {
			if c.Offered == best && c.Achieved > 0 {
				x = c.Achieved
			}
		}
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return Chart{}, err
		}
		l.Color = color.RGBA{G: 0x80, A: 0xff}
		l.Width = LineWidth
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("highest sustainable %.0f msg/s", best), l)
	}
	p.Legend.Left = true
	return Chart{Name: "capacity-" + kind, Title: p.Title.Text, Plot: p, W: Width, H: Height}, nil
}
