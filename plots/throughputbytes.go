package plots

import (
	"gonum.org/v1/plot/plotter"

	"qbench/results"
)

// ThroughputBytes is the throughput chart's second panel: payload bytes per second, acknowledged
// (solid) and delivered per consumer group (dashed), from the per-second series, on an axis in
// the unit that suits the largest rate (B/s, KiB/s, MiB/s, GiB/s). Messages of 100 bytes and of
// 1 MiB at the same msg/s are very different loads; this panel says which.
func ThroughputBytes(runs []Run) (Chart, error) {
	p := newPlot("throughput in bytes (acked solid, delivered per consumer group dashed)", "seconds since start", "")
	if err := shadeWindows(p, runs); err != nil {
		return Chart{}, err
	}
	type line struct {
		run int
		s   stroke
		pts plotter.XYs
	}
	var lines []line
	peak := 0.0
	for i, run := range runs {
		groups := int64(max(1, run.Result.Summary.Groups))
		acked := perSecond(run.Result, func(iv results.Interval) int64 { return iv.AckedBytes })
		delivered := perSecond(run.Result, func(iv results.Interval) int64 { return iv.DeliveredBytes / groups })
		for j, pts := range []plotter.XYs{acked, delivered} {
			for _, pt := range pts {
				peak = max(peak, pt.Y)
			}
			lines = append(lines, line{i, strokes[j], pts})
		}
	}
	unit, div := byteUnit(peak)
	p.Y.Label.Text = unit
	for _, l := range lines {
		pts := make(plotter.XYs, len(l.pts))
		for k, pt := range l.pts {
			pts[k] = plotter.XY{X: pt.X, Y: pt.Y / div}
		}
		if err := addLine(p, pts, colourOf(l.run, runs[l.run]), l.s, legendIf(l.s == solid, legendLabel(runs[l.run]))); err != nil {
			return Chart{}, err
		}
	}
	p.Y.Min = 0
	if peak == 0 {
		noData(p)
	}
	p.Y.Tick.Marker = intTicks{}
	return newChart("throughput-bytes", p, len(runs)), nil
}

// byteUnit is the unit of a bytes-per-second axis whose largest value is peak, and its size.
func byteUnit(peak float64) (string, float64) {
	for _, u := range []struct {
		name string
		size float64
	}{{"GiB/s", 1 << 30}, {"MiB/s", 1 << 20}, {"KiB/s", 1 << 10}} {
		if peak >= u.size {
			return u.name, u.size
		}
	}
	return "B/s", 1
}
