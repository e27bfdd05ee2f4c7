package plots

import (
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"qbench/results"
)

// offeredPerSecond is a run's offered messages per second, from the per-second series (empty
// for a closed loop, which offers no rate).
func offeredPerSecond(r *results.Result) plotter.XYs {
	any := false
	for _, iv := range r.Series {
		any = any || iv.Offered > 0
	}
	if !any {
		return nil
	}
	return perSecond(r, func(iv results.Interval) int64 { return iv.Offered })
}

// rateCurve is one line of the latency-versus-offered-rate chart: a design (or policy) at
// several offered rates.
type rateCurve struct {
	label   string
	run     int // the colour's run
	pts     plotter.XYs
	flagged []bool
}

// varyingRate says whether a run's offered rate changed over its measured seconds (a ramp or a
// profile) by more than a fifth, so that its seconds are points of a curve of their own.
func varyingRate(r *results.Result) bool {
	lo, hi := math.Inf(1), 0.0
	for _, iv := range r.Series {
		if iv.Warmup || iv.Offered <= 0 {
			continue
		}
		lo, hi = math.Min(lo, float64(iv.Offered)), math.Max(hi, float64(iv.Offered))
	}
	return hi > 0 && hi > 1.2*lo
}

// designKey is a run's label without its numbers: the cells of a matrix sweeping rate
// ("list 1000", "list 2000") are one design at several rates.
func designKey(label string) string {
	var keep []string
	for _, f := range strings.Fields(label) {
		if _, err := strconv.ParseFloat(strings.TrimSuffix(f, "/s"), 64); err != nil {
			keep = append(keep, f)
		}
	}
	if len(keep) == 0 {
		return label
	}
	return strings.Join(keep, " ")
}

// rateCurves gathers the chart's lines: a run whose offered rate varied gives a line of its
// seconds (each second's offered rate and that second's p99); runs at one rate each whose labels
// differ only in numbers give a line of one point per run.
func rateCurves(runs []Run, kind string) []rateCurve {
	var out []rateCurve
	byKey := map[string]int{}
	for i, run := range runs {
		r := run.Result
		flagged := !trustOf(r).Trusted()
		if varyingRate(r) {
			c := rateCurve{label: legendLabel(run), run: colourOf(i, run)}
			for _, iv := range r.Series {
				if v := intervalLatency(iv, kind).P99; !iv.Warmup && iv.Offered > 0 && v > 0 {
					c.pts = append(c.pts, plotter.XY{X: float64(iv.Offered), Y: float64(v) / 1e6})
					c.flagged = append(c.flagged, flagged)
				}
			}
			out = append(out, c)
			continue
		}
		v := r.Summary.Latency[kind].P99
		if r.Summary.OfferedRate <= 0 || v <= 0 {
			continue
		}
		key := designKey(run.Label)
		k, ok := byKey[key]
		if !ok {
			k = len(out)
			byKey[key] = k
			out = append(out, rateCurve{label: key, run: colourOf(i, run)})
		}
		out[k].pts = append(out[k].pts, plotter.XY{X: r.Summary.OfferedRate, Y: float64(v) / 1e6})
		out[k].flagged = append(out[k].flagged, flagged)
	}
	var keep []rateCurve
	for _, c := range out {
		if len(c.pts) < 2 {
			continue // one rate is no curve
		}
		idx := make([]int, len(c.pts))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return c.pts[idx[a]].X < c.pts[idx[b]].X })
		s := rateCurve{label: c.label, run: c.run}
		for _, i := range idx {
			s.pts = append(s.pts, c.pts[i])
			s.flagged = append(s.flagged, c.flagged[i])
		}
		if anyTrue(s.flagged) && !strings.HasSuffix(s.label, " "+FlagMark) {
			s.label += " " + FlagMark
		}
		keep = append(keep, s)
	}
	return keep
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// LatencyVsOffered is the capacity question's chart: one kind's p99 against the offered rate,
// one line per design or policy (as RabbitMQ PerfTest's rate-versus-latency scenario draws),
// from runs of a matrix sweeping rate or from a profiled run's seconds. Points from a flagged
// run are crosses. ok is false when no design was run at two rates or more.
func LatencyVsOffered(runs []Run, kind string) (c Chart, ok bool, err error) {
	curves := rateCurves(runs, kind)
	if len(curves) == 0 {
		return Chart{}, false, nil
	}
	p := newPlot(kind+" p99 against the offered rate (a cross: from a flagged run)", "offered messages per second", kind+" p99")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = msTicks{}
	p.X.Tick.Marker = intTicks{}
	p.Legend.Left = true
	for _, cv := range curves {
		if err := addLine(p, cv.pts, cv.run, solid, cv.label); err != nil {
			return Chart{}, false, err
		}
		var ok, bad plotter.XYs
		for i, pt := range cv.pts {
			if cv.flagged[i] {
				bad = append(bad, pt)
			} else {
				ok = append(ok, pt)
			}
		}
		for _, m := range []struct {
			xys   plotter.XYs
			shape draw.GlyphDrawer
		}{{ok, draw.CircleGlyph{}}, {bad, draw.CrossGlyph{}}} {
			if len(m.xys) == 0 {
				continue
			}
			s, err := plotter.NewScatter(m.xys)
			if err != nil {
				return Chart{}, false, err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: Colour(cv.run), Radius: vg.Points(3.5), Shape: m.shape}
			p.Add(s)
		}
	}
	logRange(&p.Y)
	p.X.Min = 0
	return newChart("latency-vs-offered-"+kind, p, len(curves)), true, nil
}

// offeredLine draws a run's offered rate per second, dotted, in its colour.
func offeredLine(p *plot.Plot, r *results.Result, run int) (bool, error) {
	pts := offeredPerSecond(r)
	if len(pts) == 0 {
		return false, nil
	}
	return true, addLine(p, pts, run, dotted, "")
}

// offeredLegend adds the legend's key to the dotted offered line.
func offeredLegend(p *plot.Plot) error {
	l, err := plotter.NewLine(plotter.XYs{{}, {X: 1}})
	if err != nil {
		return err
	}
	l.Color = color.Gray{Y: 0x40}
	l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
	l.Width = 1
	p.Legend.Add("offered (dotted)", l)
	return nil
}
