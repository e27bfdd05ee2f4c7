package plots

import (
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"qbench/results"
)

// A day's run has 86,400 seconds: drawn one point a second, its lines are a smear wider than the
// chart has pixels, the files grow to megabytes, and an axis in seconds reads "40000". Long runs
// are drawn in wider steps (seriesStep), and their time axes in minutes or hours (timeAxes). The
// data stays in seconds, so fault bands, the warm-up and the alignment of stacked charts are
// unchanged.

// seriesStep is the step a run's per-second series is drawn in: every second up to half an
// hour, then 10 s to 3 hours, a minute to 12 hours, 5 minutes beyond (at most ~1,100 points).
func seriesStep(runLen time.Duration) time.Duration {
	switch {
	case runLen <= 30*time.Minute:
		return time.Second
	case runLen <= 3*time.Hour:
		return 10 * time.Second
	case runLen <= 12*time.Hour:
		return time.Minute
	}
	return 5 * time.Minute
}

// stepOf is the drawing step of r's series.
func stepOf(r *results.Result) time.Duration { return seriesStep(runEnd(r)) }

// ratePoint is one interval's count over its length, before stepping.
type ratePoint struct {
	start, length float64 // seconds
	count         float64
}

// stepRates draws counts per second in steps: each step's counts over its seconds, at its middle
// (a rate averaged over the step, never a sample of one second in it). A step of a second or less
// keeps one point per interval.
func stepRates(pts []ratePoint, step time.Duration) plotter.XYs {
	out := make(plotter.XYs, 0, len(pts))
	if step <= time.Second {
		for _, p := range pts {
			out = append(out, plotter.XY{X: p.start + p.length/2, Y: p.count / p.length})
		}
		return out
	}
	w := step.Seconds()
	var cur ratePoint
	k := math.Inf(-1)
	flush := func() {
		if cur.length > 0 {
			out = append(out, plotter.XY{X: cur.start + cur.length/2, Y: cur.count / cur.length})
		}
	}
	for _, p := range pts {
		if pk := math.Floor(p.start / w); pk != k {
			flush()
			k, cur = pk, ratePoint{start: pk * w}
		}
		cur.count += p.count
		cur.length = p.start + p.length - cur.start
	}
	flush()
	return out
}

// stepMax draws readings (lag) in steps: each step's largest reading, at the step's end, so that
// a peak is never averaged away. A step of a second or less keeps every reading.
func stepMax(pts plotter.XYs, step time.Duration) plotter.XYs {
	if step <= time.Second || len(pts) == 0 {
		return pts
	}
	w := step.Seconds()
	out := make(plotter.XYs, 0, len(pts)/int(w)+2)
	for _, p := range pts {
		end := (math.Floor(p.X/w) + 1) * w
		if n := len(out); n > 0 && out[n-1].X == end {
			out[n-1].Y = max(out[n-1].Y, p.Y)
			continue
		}
		out = append(out, plotter.XY{X: end, Y: p.Y})
	}
	return out
}

// timeUnit is the unit a time axis reaching xmax seconds is labelled in.
func timeUnit(xmax float64) (name string, seconds float64) {
	switch {
	case xmax > 3*3600:
		return "hours", 3600
	case xmax > 30*60:
		return "minutes", 60
	}
	return "seconds", 1
}

// timeTicks label an axis of seconds in a larger unit, at round values of that unit.
type timeTicks struct {
	unit   float64
	suffix string
}

func (t timeTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min/t.unit, max/t.unit)
	for i := range ts {
		ts[i].Value *= t.unit
		if ts[i].Label != "" {
			ts[i].Label += t.suffix
		}
	}
	return ts
}

// timeAxes labels the time charts of a long run in minutes or hours: one unit for them all (the
// longest one's), since a report stacks them as one time axis.
func timeAxes(charts []Chart) {
	xmax := 0.0
	for _, c := range charts {
		if !isTimeChart(c.Name) {
			continue
		}
		if c.Plot != nil {
			xmax = max(xmax, c.Plot.X.Max)
		}
		for _, p := range c.Panels {
			xmax = max(xmax, p.X.Max)
		}
	}
	name, unit := timeUnit(xmax)
	if unit == 1 {
		return
	}
	for i := range charts {
		c := &charts[i]
		if !isTimeChart(c.Name) {
			continue
		}
		ps := c.Panels
		if c.Plot != nil {
			ps = append(ps, c.Plot)
		}
		for _, p := range ps {
			p.X.Tick.Marker = timeTicks{unit: unit, suffix: name[:1]}
			p.X.Label.Text = strings.Replace(p.X.Label.Text, "seconds", name, 1)
		}
		c.XLabel = strings.Replace(c.XLabel, "seconds", name, 1)
	}
}
