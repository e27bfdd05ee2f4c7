package plots

import (
	"fmt"
	"sort"

	"gonum.org/v1/plot/plotter"

	"qbench/results"
)

// GroupLagPoints is each receiving group's lag readings in time order (index: group): the
// per-second readings at the end of their interval and the sub-second samples taken around
// faults, as LagPoints. Nil when the result has no per-group readings (one group).
func GroupLagPoints(r *results.Result) []plotter.XYs {
	type reading struct {
		x   float64
		lag []int64
	}
	var all []reading
	for i, iv := range r.Series {
		if iv.GroupLag == nil {
			continue
		}
		end := float64(iv.StartNs)/1e9 + 1
		if i+1 < len(r.Series) {
			end = float64(r.Series[i+1].StartNs) / 1e9
		} else if e := runEnd(r).Seconds(); e > float64(iv.StartNs)/1e9 && e < end {
			end = e
		}
		all = append(all, reading{end, iv.GroupLag})
	}
	for _, s := range r.LagSamples {
		if s.GroupLag != nil {
			all = append(all, reading{float64(s.AtNs) / 1e9, s.GroupLag})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].x < all[j].x })
	var out []plotter.XYs
	for _, rd := range all {
		for len(out) < len(rd.lag) {
			out = append(out, nil)
		}
		for g, v := range rd.lag {
			out[g] = append(out[g], plotter.XY{X: rd.x, Y: float64(v)})
		}
	}
	return out
}

// hasGroups says whether any run has per-group lag readings.
func hasGroups(runs []Run) bool {
	for _, run := range runs {
		if len(GroupLagPoints(run.Result)) > 1 {
			return true
		}
	}
	return false
}

// GroupLag shows each receiving group's lag over time (the load generator's view: acknowledged
// messages the group has not received), so a second group that falls behind stands apart from
// one that keeps up. With one run each group has a colour of its own; with several, a run keeps
// its colour and its groups are told apart by stroke.
func GroupLag(runs []Run) (Chart, error) {
	p := newPlot("lag over time, per group (load generator's view)", "seconds since start", "messages")
	if err := shadeWindows(p, runs); err != nil {
		return Chart{}, err
	}
	entries := 0
	for i, run := range runs {
		for g, pts := range GroupLagPoints(run.Result) {
			pts = stepMax(pts, stepOf(run.Result))
			colour, s, label := colourOf(i, run), strokes[g%len(strokes)], fmt.Sprintf("%s group %d", legendLabel(run), g)
			if len(runs) == 1 {
				colour, s, label = g, solid, fmt.Sprintf("group %d", g)
			}
			if err := addLine(p, pts, colour, s, label); err != nil {
				return Chart{}, err
			}
			entries++
		}
	}
	p.Y.Min = 0
	if entries == 0 {
		noData(p)
	}
	p.Y.Tick.Marker = intTicks{}
	return newChart("lag-per-group", p, entries), nil
}
