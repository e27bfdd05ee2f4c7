package results

import (
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency bins: latency over time at a finer grain than Series, in two clocks. Binned by
// completion (the ack, the delivery) a bin shows what was seen then; binned by intended send time
// a bin shows what happened to the messages the schedule meant to send then, so the latency of
// everything sent into a fault lands in the fault's band instead of after it.
const (
	BinByCompleted = "completed"
	BinByIntended  = "intended"

	// BinSigFigs is the bins' histogram precision: one significant digit (about 6% steps) keeps
	// a bin near 5 KB, enough to chart p50/p99 over a few thousand bins.
	BinSigFigs = 1
	// MaxBins bounds a run's bins of one series: a long run gets wider bins.
	MaxBins = 3000
)

// BinWidth is the bin width for a run: 100 ms when it has faults (a one-second bin hides a
// sub-second stall), 1 s otherwise, widened to whole 100 ms steps so the run has at most MaxBins.
func BinWidth(duration time.Duration, hasFaults bool) time.Duration {
	w := time.Second
	if hasFaults {
		w = 100 * time.Millisecond
	}
	const step = 100 * time.Millisecond
	if min := duration / MaxBins; min > w {
		w = (min + step - 1) / step * step
	}
	return w
}

// NewBinHistogram is one bin's histogram.
func NewBinHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, BinSigFigs)
}

// LatencySeries is one clock's bins; a bin without messages is left out.
type LatencySeries struct {
	By      string       `json:"by"` // BinByCompleted or BinByIntended
	WidthNs int64        `json:"width_ns"`
	Bins    []LatencyBin `json:"bins"`
}

// LatencyBin holds the messages whose time falls in [StartNs, StartNs+width).
type LatencyBin struct {
	StartNs int64   `json:"start_ns"`
	Produce Latency `json:"produce"`
	E2E     Latency `json:"e2e"`
}

// BinKey names one bin: its clock, its latency kind (produce or end-to-end) and its index.
type BinKey struct {
	Intended bool
	E2E      bool
	Index    int64 // time / width
}

// BuildLatencySeries turns histograms by bin into the two series, bins in time order.
func BuildLatencySeries(widthNs int64, hists map[BinKey]*hdrhistogram.Histogram) []LatencySeries {
	return BuildLatencySeriesFrom(widthNs, func(fn func(BinKey, *hdrhistogram.Histogram)) {
		for k, h := range hists {
			fn(k, h)
		}
	})
}

// BuildLatencySeriesFrom is BuildLatencySeries over the bins each gives, one at a time: a bin's
// histogram is read only during its call.
func BuildLatencySeriesFrom(widthNs int64, each func(fn func(BinKey, *hdrhistogram.Histogram))) []LatencySeries {
	out := make([]LatencySeries, 0, 2)
	byIdx := [2]map[int64]*LatencyBin{{}, {}}
	each(func(k BinKey, h *hdrhistogram.Histogram) {
		if h.TotalCount() == 0 {
			return
		}
		clock := 0
		if k.Intended {
			clock = 1
		}
		b := byIdx[clock][k.Index]
		if b == nil {
			b = &LatencyBin{StartNs: k.Index * widthNs}
			byIdx[clock][k.Index] = b
		}
		if k.E2E {
			b.E2E = Summarise(h)
		} else {
			b.Produce = Summarise(h)
		}
	})
	for clock, intended := range []bool{false, true} {
		byIdx := byIdx[clock]
		s := LatencySeries{By: BinByCompleted, WidthNs: widthNs}
		if intended {
			s.By = BinByIntended
		}
		for _, b := range byIdx {
			s.Bins = append(s.Bins, *b)
		}
		sort.Slice(s.Bins, func(i, j int) bool { return s.Bins[i].StartNs < s.Bins[j].StartNs })
		out = append(out, s)
	}
	return out
}

// LatencyBins returns r's series binned by (BinByCompleted or BinByIntended), or nil when the
// result has none (results written before bins existed).
func (r *Result) LatencyBins(by string) *LatencySeries {
	for i := range r.Bins {
		if r.Bins[i].By == by {
			return &r.Bins[i]
		}
	}
	return nil
}
