package plots

import (
	"fmt"
	"image/color"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"qbench/results"
)

// faultKindColours give each fault kind its own translucent band colour, the same in every chart
// and in the report's timeline.
var faultKindColours = map[string]color.NRGBA{
	"stall":              {0xe0, 0x40, 0x40, 0x40},
	"server-crash":       {0xb0, 0x00, 0x20, 0x48},
	"power-loss":         {0x70, 0x00, 0x70, 0x48},
	"disk-full":          {0xe0, 0x90, 0x00, 0x48},
	"io-error":           {0xc0, 0x60, 0x30, 0x48},
	"fork-failure":       {0x90, 0x60, 0xc0, 0x48},
	"failover":           {0x00, 0x70, 0xc0, 0x40},
	"command":            {0x40, 0x90, 0x40, 0x40},
	"consumer-crash":     {0xff, 0x50, 0x00, 0x48},
	"consumer-pause":     {0x00, 0xa0, 0xa0, 0x40},
	"slow-consumer":      {0xa0, 0xa0, 0x00, 0x48},
	"subscriber-offline": {0x60, 0x60, 0xc0, 0x40},

	// Kafka cluster faults.
	"partition-leader-kill": {0x80, 0x30, 0x00, 0x48},
	"node-restart":          {0x30, 0x50, 0x90, 0x48},
}

// FaultKindColour is the band colour of a fault kind (FaultColour for a kind it does not know);
// a marked fault's lane ("stall (marked)") has its kind's colour.
func FaultKindColour(kind string) color.NRGBA {
	if c, ok := faultKindColours[strings.TrimSuffix(kind, " (marked)")]; ok {
		return c
	}
	return FaultColour
}

// Band is one fault as it happened: from the result's measured fault windows (when the fault
// really began and ended), else from the scenario's plan.
type Band struct {
	Kind, Target string
	Start, End   time.Duration
	// Open marks a fault that had not ended when the run did (a consumer that never came back,
	// a snapshot still being written).
	Open bool
	// Instant marks a fault that was one moment (a command that started no background work):
	// End equals Start, drawn as a thin band.
	Instant bool
	// Marked: something other than qbench injected the fault and marked it (qbench mark).
	Marked bool
}

// Bands returns a result's faults as they happened, in start order. An instant (FaultWindow's
// Instant, or a command fault of zero length from a result written before that field existed:
// such a window could not be open then) ends where it starts; any other measured window that
// never ended (EndNs before StartNs, equal to it, or past the run) runs to the end of the run
// and is marked Open.
func Bands(r *results.Result) ([]Band, error) {
	end := runEnd(r)
	var out []Band
	if len(r.Faults) > 0 {
		for _, w := range r.Faults {
			b := Band{Kind: w.Kind, Target: w.Target, Start: time.Duration(w.StartNs), End: time.Duration(w.EndNs), Marked: w.Marked}
			switch {
			case w.Instant || (w.Kind == "command" && w.EndNs == w.StartNs):
				b.End, b.Instant = b.Start, true
			case w.EndNs <= w.StartNs || w.EndNs > int64(end)+int64(time.Hour):
				b.End, b.Open = max(end, b.Start), true
			}
			out = append(out, b)
		}
	} else {
		fs, err := Faults(r)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			out = append(out, Band{Kind: f.Kind, Start: f.At, End: f.At + f.Duration})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

// runEnd is when the run's consumers stopped: warm-up, measured window and drain.
func runEnd(r *results.Result) time.Duration {
	s := r.Summary
	end := Warmup(r) + time.Duration((s.MeasuredSeconds+s.DrainSeconds)*1e9)
	if n := len(r.Series); n > 0 {
		end = max(end, time.Duration(r.Series[n-1].StartNs))
	}
	return end
}

// minBandWidth is the narrowest a fault band is drawn, whatever the run's length: an instant
// in an hour's run is still visible.
const minBandWidth = vg.Length(2)

// shadeWindows shades the warm-up across the plot and draws every run's faults as they
// happened in lanes above the plot area, one lane per fault kind (faultLanes), with a dashed
// line in the kind's colour where each fault began and ended: overlapping faults never blend
// into a colour of their own. Identical bands of several runs (the same scenario) are drawn once.
func shadeWindows(p *plot.Plot, runs []Run) error {
	seen := map[string]bool{}
	var warmupShown bool
	lanes := &faultLanes{}
	for _, run := range runs {
		if w := Warmup(run.Result); w > 0 && !seen["warmup"+w.String()] {
			seen["warmup"+w.String()] = true
			s := shade{X0: 0, X1: w.Seconds(), Colour: WarmupColour}
			p.Add(s)
			if !warmupShown {
				p.Legend.Add("warm-up", s)
				warmupShown = true
			}
		}
		bands, err := Bands(run.Result)
		if err != nil {
			return fmt.Errorf("%s: %w", run.Label, err)
		}
		for _, b := range bands {
			// Bands of different runs within 50 ms are the same planned fault.
			key := fmt.Sprintf("%s/%s/%d/%d", b.Kind, b.Target, b.Start/(50*time.Millisecond), b.End/(50*time.Millisecond))
			if seen[key] {
				continue
			}
			seen[key] = true
			lanes.add(b)
		}
	}
	if len(lanes.kinds) > 0 {
		p.Add(lanes)
		p.Title.Padding += lanes.height()
	}
	return nil
}
