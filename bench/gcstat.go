package bench

import (
	"math"
	"runtime/metrics"
	"slices"
	"time"

	"qbench/results"
)

// gcSample is qbench's own garbage collector so far, from runtime/metrics: cycles completed, the
// stop-the-world pause histogram, the collector's CPU and all the CPU the runtime accounts
// (total minus idle), both the runtime's estimates.
type gcSample struct {
	cycles       uint64
	pauseBuckets []float64 // bucket boundaries in seconds, len(pauseCounts)+1
	pauseCounts  []uint64
	gcCPU, goCPU float64
	ok           bool
}

var gcMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/cpu/classes/idle:cpu-seconds",
}

func readGC() gcSample {
	s := make([]metrics.Sample, len(gcMetrics))
	for i, n := range gcMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	for _, m := range s {
		if m.Value.Kind() == metrics.KindBad {
			return gcSample{}
		}
	}
	h := s[1].Value.Float64Histogram()
	return gcSample{
		cycles:       s[0].Value.Uint64(),
		pauseBuckets: slices.Clone(h.Buckets),
		pauseCounts:  slices.Clone(h.Counts), // the runtime may reuse its slices
		gcCPU:        s[2].Value.Float64(),
		goCPU:        s[3].Value.Float64() - s[4].Value.Float64(),
		ok:           true,
	}
}

// fillGC sets g's GC fields from two samples over wall time: the pauses between them are the
// histogram's difference, each counted at its bucket's midpoint, the longest at the upper bound
// of the highest bucket that grew (its lower bound for the last, open bucket), at most the total.
func fillGC(g *results.Generator, start, end gcSample, wall time.Duration) {
	if !start.ok || !end.ok || len(start.pauseCounts) != len(end.pauseCounts) || len(end.pauseBuckets) != len(end.pauseCounts)+1 {
		return
	}
	g.GCCycles = int64(end.cycles - start.cycles)
	var total, longest float64
	for i, c := range end.pauseCounts {
		n := c - start.pauseCounts[i]
		if n == 0 {
			continue
		}
		lo, hi := end.pauseBuckets[i], end.pauseBuckets[i+1]
		lo = max(lo, 0) // the first bucket opens at -Inf
		mid := (lo + hi) / 2
		if math.IsInf(hi, 1) {
			hi, mid = lo, lo
		}
		total += float64(n) * mid
		longest = hi
	}
	// One pause is never longer than all of them: the bucket bounds would otherwise print a
	// longest above the total for a run with one or two pauses.
	longest = min(longest, total)
	g.GCPauseTotalNs = int64(total * 1e9)
	g.GCPauseMaxNs = int64(longest * 1e9)
	if wall > 0 {
		g.GCPauseShare = total / wall.Seconds()
	}
	g.GCCPUSeconds = max(end.gcCPU-start.gcCPU, 0)
	if goCPU := end.goCPU - start.goCPU; goCPU > 0 {
		g.GCCPUShare = g.GCCPUSeconds / goCPU
	}
}
