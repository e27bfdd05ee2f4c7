package bench

import (
	"sync"
	"time"

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
	// warm is the part of interval intended during the warm-up, so that an interval log can tag
	// it and its other intervals add up to the summary exactly.
	warm map[string]*hdrhistogram.Histogram
	// The same histograms by kind index (see kindIndex): record runs several times per message,
	// and two map lookups each time were a visible share of the generator's CPU.
	intervalBy, measuredBy, warmBy [3]*hdrhistogram.Histogram
	dropped                        int64
	bins                           binner
	// The spare set, swapped with interval, warm and bins at each harvest: the lock is held for
	// the swap only, and the merges (tens of microseconds each, longer when the harvesting
	// thread is descheduled on a loaded machine) run outside it, where they held up every
	// record of this goroutine's producer or consumer once a second.
	spareInterval, spareWarm     map[string]*hdrhistogram.Histogram
	spareIntervalBy, spareWarmBy [3]*hdrhistogram.Histogram
	spareBins                    binner
	// harvestMu makes one harvest at a time (the spare set is the harvester's between swaps).
	harvestMu sync.Mutex
}

// newRecorder's binWidth is the latency bins' width (results.BinWidth).
func newRecorder(binWidth time.Duration) *recorder {
	r := &recorder{interval: map[string]*hdrhistogram.Histogram{}, measured: map[string]*hdrhistogram.Histogram{},
		warm: map[string]*hdrhistogram.Histogram{}, bins: newBinner(binWidth),
		spareInterval: map[string]*hdrhistogram.Histogram{}, spareWarm: map[string]*hdrhistogram.Histogram{}, spareBins: newBinner(binWidth)}
	for i, k := range kinds {
		r.interval[k] = results.NewHistogram()
		r.measured[k] = results.NewHistogram()
		r.warm[k] = results.NewHistogram()
		r.intervalBy[i], r.measuredBy[i], r.warmBy[i] = r.interval[k], r.measured[k], r.warm[k]
		r.spareInterval[k], r.spareWarm[k] = results.NewHistogram(), results.NewHistogram()
		r.spareIntervalBy[i], r.spareWarmBy[i] = r.spareInterval[k], r.spareWarm[k]
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
	} else {
		_ = r.warmBy[k].RecordValue(ns) // a drop is counted once, above
	}
}

// recordAt records a produce or end-to-end latency, at minus intended, and adds it to the
// latency bins of both clocks.
func (r *recorder) recordAt(kind string, intendedNs, atNs int64, measured bool) {
	r.record(kind, atNs-intendedNs, measured)
	r.bins.add(kind == KindE2E, intendedNs, atNs)
}

// harvest merges this recorder's interval histograms into into (and their warm-up part into
// warm), and resets them; its latency bins go into bins.
func (r *recorder) harvest(into, warm map[string]*hdrhistogram.Histogram, bins map[results.BinKey]*hdrhistogram.Histogram) (dropped int64) {
	r.harvestMu.Lock()
	defer r.harvestMu.Unlock()
	// Swap in the spare set (reset at the last harvest), then merge what was swapped out.
	r.mu.Lock()
	r.interval, r.spareInterval = r.spareInterval, r.interval
	r.warm, r.spareWarm = r.spareWarm, r.warm
	r.intervalBy, r.spareIntervalBy = r.spareIntervalBy, r.intervalBy
	r.warmBy, r.spareWarmBy = r.spareWarmBy, r.warmBy
	r.bins, r.spareBins = r.spareBins, r.bins
	r.mu.Unlock()
	r.spareBins.harvest(bins)
	for _, k := range kinds {
		dropped += into[k].Merge(r.spareInterval[k])
		r.spareInterval[k].Reset()
		if r.spareWarm[k].TotalCount() > 0 {
			warm[k].Merge(r.spareWarm[k])
			r.spareWarm[k].Reset()
		}
	}
	return dropped
}
