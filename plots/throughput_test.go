package plots_test

import (
	"math"
	"testing"
	"time"

	"qbench/plots"
	"qbench/results"
	"qbench/results/resultstest"
)

// fanOut makes r a pub/sub-like run with groups receiving groups: every message is delivered
// once to each, in the series and in the sub-second bins.
func fanOut(r *results.Result, groups int) *results.Result {
	r.Summary.Groups = groups
	for i := range r.Series {
		r.Series[i].Deliveries *= int64(groups)
	}
	for i := range r.Bins {
		for j := range r.Bins[i].Bins {
			r.Bins[i].Bins[j].E2E.Count *= int64(groups)
		}
	}
	return r
}

// Throughput is normalised per consumer group: a pub/sub run delivering each message to five
// subscribers draws its delivered line (dashed) on its acked line (solid), and a one-group run
// at the same rate beside it is not flattened to a fifth of the axis. Checked for the per-second
// series and for the sub-second bins of a run with faults.
func TestThroughputPerConsumerGroup(t *testing.T) {
	for _, faults := range []bool{false, true} {
		o := resultstest.Options{Name: "q", Seed: 1, Seconds: 8, Warmup: 1}
		if faults {
			o.StallAt, o.StallFor = 4*time.Second, 300*time.Millisecond
		}
		one := resultstest.Make(o)
		o.Seed = 2
		five := fanOut(resultstest.Make(o), 5)
		ch, err := plots.Throughput([]plots.Run{{Label: "list", Result: one}, {Label: "pubsub", Result: five}})
		if err != nil {
			t.Fatal(err)
		}
		svg := renderSVG(t, ch)
		area := warmupArea(t, svg, 1)
		oneAcked, _ := svgLines(svg, plots.Colour(0))
		fiveAcked, fiveDelivered := svgLines(svg, plots.Colour(1))
		if len(oneAcked) == 0 || len(fiveAcked) == 0 || len(fiveDelivered) == 0 {
			t.Fatalf("faults %v: lines missing: list acked %d, pubsub acked %d delivered %d", faults, len(oneAcked), len(fiveAcked), len(fiveDelivered))
		}
		a, d, l := area.height(medianY(fiveAcked)), area.height(medianY(fiveDelivered)), area.height(medianY(oneAcked))
		if math.Abs(a-d) > 0.03 {
			t.Errorf("faults %v: pub/sub delivered per group at %.2f of the axis, acked at %.2f: want the same height", faults, d, a)
		}
		if math.Abs(l-a) > 0.03 {
			t.Errorf("faults %v: the one-group run at %.2f of the axis, the pub/sub run at %.2f: want the same height", faults, l, a)
		}
		// Without faults nothing but the rate sets the axis (with them, the burst that ends a
		// stall does): the runs stand near its top.
		if !faults && l < 0.6 {
			t.Errorf("the one-group run is flattened to %.2f of the axis", l)
		}
	}
}

// The last interval is a partial second (the consumers stopped 250 ms into it): it is drawn as
// the rate it had, not as a drop to a quarter (or to half, for the last 100 ms bin). Checked for
// the per-second series and the bins.
func TestThroughputLastPartialSecondDoesNotDrop(t *testing.T) {
	for _, faults := range []bool{false, true} {
		o := resultstest.Options{Name: "q", Seed: 1, Seconds: 8, Warmup: 1}
		if faults {
			o.StallAt, o.StallFor = 3*time.Second, 300*time.Millisecond
		}
		r := resultstest.Make(o)
		// The run ends at 7.25 s: the last second holds 250 ms of messages, and the last
		// 100 ms bin 50 ms.
		end := 7250 * time.Millisecond
		r.Summary.MeasuredSeconds = end.Seconds() - 1
		last := &r.Series[len(r.Series)-1]
		last.Acked, last.Deliveries = last.Acked/4, last.Deliveries/4
		for i := range r.Bins {
			bins := r.Bins[i].Bins[:0]
			for _, b := range r.Bins[i].Bins {
				if b.StartNs+int64(100*time.Millisecond) > int64(end) {
					b.Produce.Count, b.E2E.Count = b.Produce.Count/2, b.E2E.Count/2
				}
				if b.StartNs < int64(end) {
					bins = append(bins, b)
				}
			}
			r.Bins[i].Bins = bins
		}
		ch, err := plots.Throughput([]plots.Run{{Label: "q", Result: r}})
		if err != nil {
			t.Fatal(err)
		}
		svg := renderSVG(t, ch)
		area := warmupArea(t, svg, 1)
		acked, delivered := svgLines(svg, plots.Colour(0))
		for name, lines := range map[string][][]pt{"acked": acked, "delivered": delivered} {
			if len(lines) == 0 {
				t.Fatalf("faults %v: no %s line", faults, name)
			}
			p, mid := lastPoint(lines), medianY(lines)
			if at := area.seconds(p.X); at < 6.5 || at > end.Seconds() {
				t.Errorf("faults %v: %s line's last point at %.2fs, want within the last second, before %v", faults, name, at, end)
			}
			if drop := area.height(mid) - area.height(p.Y); math.Abs(drop) > 0.05 {
				t.Errorf("faults %v: %s line's last point at %.2f of the axis, the run's median %.2f: the partial second is drawn as a change of rate", faults, name, area.height(p.Y), area.height(mid))
			}
		}
	}
}
