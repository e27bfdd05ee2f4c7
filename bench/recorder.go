package bench

import (
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// Latency kinds, as named in result files.
const (
	KindProduce   = "produce"
	KindSendDelay = "send_delay"
	KindE2E       = "e2e"
)

var kinds = []string{KindProduce, KindSendDelay, KindE2E}

// recorder belongs to one producer or consumer goroutine. HDR histograms are not safe for
// concurrent use, so each goroutine records into its own, and the sampler harvests them under the
// recorder's lock once a second (the lock is uncontended otherwise).
type recorder struct {
	mu       sync.Mutex
	interval map[string]*hdrhistogram.Histogram // everything, for the per-second series
	measured map[string]*hdrhistogram.Histogram // after warm-up only, for the summary
	// The same histograms by kind index (see kindIndex): record runs several times per message,
	// and two map lookups each time were a visible share of the generator's CPU.
	intervalBy, measuredBy [3]*hdrhistogram.Histogram
	dropped                int64
}

func newRecorder() *recorder {
	r := &recorder{interval: map[string]*hdrhistogram.Histogram{}, measured: map[string]*hdrhistogram.Histogram{}}
	for i, k := range kinds {
		r.interval[k] = results.NewHistogram()
		r.measured[k] = results.NewHistogram()
		r.intervalBy[i], r.measuredBy[i] = r.interval[k], r.measured[k]
	}
	return r
}

// kindIndex is kind's position in kinds.
func kindIndex(kind string) int {
	switch kind {
	case KindProduce:
		return 0
	case KindSendDelay:
		return 1
	case KindE2E:
		return 2
	}
	panic("bench: unknown latency kind " + kind)
}

// record adds one latency in ns. Values below zero (clock steps cannot happen on the monotonic
// clock, but a consumer can see a message stamped a moment ahead) are recorded as 0.
func (r *recorder) record(kind string, ns int64, measured bool) {
	if ns < 0 {
		ns = 0
	}
	if ns > results.HistHighest {
		ns = results.HistHighest
		r.dropped++
	}
	k := kindIndex(kind)
	if err := r.intervalBy[k].RecordValue(ns); err != nil {
		r.dropped++
	}
	if measured {
		if err := r.measuredBy[k].RecordValue(ns); err != nil {
			r.dropped++
		}
	}
}

// harvest merges this recorder's interval histograms into into, and resets them.
func (r *recorder) harvest(into map[string]*hdrhistogram.Histogram) (dropped int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range kinds {
		dropped += into[k].Merge(r.interval[k])
		r.interval[k].Reset()
	}
	return dropped
}
