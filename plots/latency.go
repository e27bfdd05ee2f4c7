package plots

import (
	"fmt"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"qbench/results"
)

// LatencyPoint is one bin of latency over time: X is the bin's middle in seconds since the
// start.
type LatencyPoint struct {
	X       float64
	Latency results.Latency
}

// LatencyPoints is one run's latency over time of one kind, by clock (results.BinByCompleted
// or results.BinByIntended; "" is completed), and the bins' width. Produce and end-to-end
// latencies come from the result's latency bins (100 ms for runs with faults); send delay, and
// results written before the bins existed, from the per-second series, binned by when the
// sampler took them (width 1 s, binned false).
func LatencyPoints(r *results.Result, kind, by string) (pts []LatencyPoint, width time.Duration, binned bool) {
	if by == "" {
		by = results.BinByCompleted
	}
	if s := r.LatencyBins(by); s != nil && (kind == "produce" || kind == "e2e") && s.WidthNs > 0 {
		half := float64(s.WidthNs) / 2e9
		for _, b := range s.Bins {
			l := b.Produce
			if kind == "e2e" {
				l = b.E2E
			}
			if l.Count > 0 {
				pts = append(pts, LatencyPoint{X: float64(b.StartNs)/1e9 + half, Latency: l})
			}
		}
		return pts, time.Duration(s.WidthNs), true
	}
	if step := stepOf(r); step > time.Second {
		return steppedLatency(r, kind, step), step, false // a long run (timeaxis.go)
	}
	for i, iv := range r.Series {
		pts = append(pts, LatencyPoint{X: mid(r, i), Latency: intervalLatency(iv, kind)})
	}
	return pts, time.Second, false
}

// steppedLatency is a long run's latency of one kind in steps of its series: each step's
// seconds' histograms merged, one at a time (a day's 86,400 decoded at once would not fit), and
// its percentiles read from the merge. A second without a histogram (an older result) adds its
// own figures' worst: the step's p50, p99 and max are then the largest of its seconds'.
func steppedLatency(r *results.Result, kind string, step time.Duration) []LatencyPoint {
	var pts []LatencyPoint
	w := int64(step)
	acc := results.NewHistogram()
	var worst results.Latency
	k := int64(-1)
	flush := func() {
		if k < 0 {
			return
		}
		l := results.Summarise(acc)
		if l.Count == 0 {
			l = worst
		}
		if l.Count > 0 || l.Max > 0 {
			pts = append(pts, LatencyPoint{X: (float64(k*w) + float64(w)/2) / 1e9, Latency: l})
		}
		acc.Reset()
		worst = results.Latency{}
	}
	for _, iv := range r.Series {
		if ik := iv.StartNs / w; ik != k {
			flush()
			k = ik
		}
		if enc := iv.Histograms[kind]; enc != "" {
			if h, err := results.DecodeHistogram(enc); err == nil {
				acc.Merge(h)
				continue
			}
		}
		l := intervalLatency(iv, kind)
		worst.Count += l.Count
		worst.P50, worst.P99, worst.Max = max(worst.P50, l.P50), max(worst.P99, l.P99), max(worst.Max, l.Max)
	}
	flush()
	return pts
}

// LatencyOverTime shows p50, p99 and max of one latency kind over time, every run overlaid
// (p50 dashed, p99 solid, max dotted), with warm-up and fault windows shaded. by is the clock
// (see LatencyPoints): binned by intended send time, the latency of messages sent into a fault
// stands in the fault's band, where binned by completion it shows when the backlog cleared.
func LatencyOverTime(runs []Run, kind, by string) (Chart, error) {
	name, clock := "latency-"+kind, "completion"
	if by == results.BinByIntended {
		name, clock = "latency-intended-"+kind, "intended send time"
	}
	p := newPlot("", "seconds since start", "latency")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = msTicks{}
	if err := shadeWindows(p, runs); err != nil {
		return Chart{}, err
	}
	var any bool
	widths := map[time.Duration]bool{}
	for i, run := range runs {
		pts, width, binned := LatencyPoints(run.Result, kind, by)
		if !binned {
			clock = "second" // older results and send delay: the per-second series
		}
		widths[width] = true
		for j, get := range []func(results.Latency) int64{
			func(l results.Latency) int64 { return l.P50 },
			func(l results.Latency) int64 { return l.P99 },
			func(l results.Latency) int64 { return l.Max },
		} {
			var xy plotter.XYs
			for _, pt := range pts {
				if v := get(pt.Latency); v > 0 { // a log axis has no zero: skip empty bins
					xy = append(xy, plotter.XY{X: pt.X, Y: float64(v) / 1e6})
				}
			}
			s := []stroke{dashed, solid, dotted}[j]
			for k, seg := range splitAtGaps(xy, width.Seconds()) {
				if err := addLine(p, seg, colourOf(i, run), s, legendIf(s == solid && k == 0, legendLabel(run))); err != nil {
					return Chart{}, err
				}
			}
			any = any || len(xy) > 0
		}
	}
	binWords := "bins"
	if len(widths) == 1 {
		for w := range widths {
			binWords = formatWidth(w) + " bins"
		}
	}
	p.Title.Text = fmt.Sprintf("%s latency over time, %s by %s (p50 dashed, p99 solid, max dotted)", kind, binWords, clock)
	if clock == "second" {
		p.Title.Text = kind + " latency over time (p50 dashed, p99 solid, max dotted)"
	}
	if !any {
		noData(p)
	} else {
		logRange(&p.Y)
	}
	return newChart(name, p, len(runs)), nil
}

// BinnedRates is a run's acknowledgements and deliveries (per consumer group) per second in its
// completion bins, when they are narrower than a second (ok false otherwise: the per-second
// series says as much). A bin with no completion is a rate of zero; the last bin is divided by
// the part of it the run lasted, so a partial bin does not read as a drop.
func BinnedRates(r *results.Result, groups int64) (acked, delivered plotter.XYs, ok bool) {
	s := r.LatencyBins(results.BinByCompleted)
	if s == nil || s.WidthNs <= 0 || s.WidthNs >= int64(time.Second) || len(s.Bins) == 0 {
		return nil, nil, false
	}
	w := s.WidthNs
	byIdx := map[int64]results.LatencyBin{}
	for _, b := range s.Bins {
		byIdx[b.StartNs/w] = b
	}
	first, last := s.Bins[0].StartNs/w, s.Bins[len(s.Bins)-1].StartNs/w
	end := int64(runEnd(r))
	for k := first; k <= last; k++ {
		b := byIdx[k]
		length := w
		if start := k * w; k == last && end > start && end < start+w {
			length = end - start
		}
		if length < w/4 {
			continue // too short a sliver to be a rate
		}
		x := (float64(k*w) + float64(length)/2) / 1e9
		sec := float64(length) / 1e9
		acked = append(acked, plotter.XY{X: x, Y: float64(b.Produce.Count) / sec})
		delivered = append(delivered, plotter.XY{X: x, Y: float64(b.E2E.Count/groups) / sec})
	}
	return acked, delivered, true
}

// splitAtGaps cuts a line where bins are missing (nothing completed in them, as during a
// stall), so that no line is drawn through time without data.
func splitAtGaps(xy plotter.XYs, width float64) []plotter.XYs {
	var out []plotter.XYs
	start := 0
	for i := 1; i <= len(xy); i++ {
		if i == len(xy) || xy[i].X-xy[i-1].X > 1.5*width {
			out = append(out, xy[start:i])
			start = i
		}
	}
	return out
}

// formatWidth is a bin width as a reader says it: "100 ms", "1 s".
func formatWidth(w time.Duration) string {
	if w < time.Second {
		return fmt.Sprintf("%d ms", w.Milliseconds())
	}
	return fmt.Sprintf("%g s", w.Seconds())
}

func intervalLatency(iv results.Interval, kind string) results.Latency {
	switch kind {
	case "produce":
		return iv.Produce
	case "send_delay":
		return iv.SendDelay
	default:
		return iv.E2E
	}
}
