package bench

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// A recorder puts each produce and end-to-end latency in the bin of its intended send time and
// in the bin of its completion; a harvest moves them to the sampler's bins and empties the
// recorder's, and later harvests add to the same bins.
func TestRecorderBins(t *testing.T) {
	ms := int64(time.Millisecond)
	rec := newRecorder(100 * time.Millisecond)
	rec.recordAt(KindProduce, 50*ms, 60*ms, true)  // intended bin 0, completed bin 0
	rec.recordAt(KindProduce, 90*ms, 350*ms, true) // intended bin 0, completed bin 3
	rec.recordAt(KindE2E, 120*ms, 130*ms, true)    // intended bin 1, completed bin 1
	rec.record(KindSendDelay, 5*ms, true)          // not binned
	into := map[results.BinKey]*hdrhistogram.Histogram{}
	rec.harvest(map[string]*hdrhistogram.Histogram{KindProduce: results.NewHistogram(), KindSendDelay: results.NewHistogram(), KindE2E: results.NewHistogram()},
		map[string]*hdrhistogram.Histogram{KindProduce: results.NewHistogram(), KindSendDelay: results.NewHistogram(), KindE2E: results.NewHistogram()}, into)
	rec.recordAt(KindProduce, 20*ms, 40*ms, true) // after the harvest: bin 0 again
	rec.harvest(map[string]*hdrhistogram.Histogram{KindProduce: results.NewHistogram(), KindSendDelay: results.NewHistogram(), KindE2E: results.NewHistogram()},
		map[string]*hdrhistogram.Histogram{KindProduce: results.NewHistogram(), KindSendDelay: results.NewHistogram(), KindE2E: results.NewHistogram()}, into)
	want := map[results.BinKey]int64{
		{Intended: true, Index: 0}:            3,
		{Index: 0}:                            2,
		{Index: 3}:                            1,
		{Intended: true, E2E: true, Index: 1}: 1,
		{E2E: true, Index: 1}:                 1,
	}
	if len(into) != len(want) {
		t.Errorf("%d bins, want %d: %v", len(into), len(want), into)
	}
	for k, n := range want {
		if h := into[k]; h == nil || h.TotalCount() != n {
			t.Errorf("bin %+v: %v, want %d values", k, h, n)
		}
	}
	if len(rec.bins.hists) != 0 {
		t.Errorf("the recorder kept %d bins after the harvest", len(rec.bins.hists))
	}
	series := results.BuildLatencySeries(int64(100*time.Millisecond), into)
	if len(series) != 2 || series[1].By != results.BinByIntended || len(series[1].Bins) != 2 || series[1].Bins[1].StartNs != 100*ms {
		t.Errorf("series %+v", series)
	}
	if got := series[0].Bins[len(series[0].Bins)-1]; len(series[0].Bins) != 3 || got.StartNs != 300*ms || got.Produce.Count != 1 || got.Produce.Max < 250*ms {
		t.Errorf("completed bin at 300 ms: %+v", got)
	}
}

// The cost of binning on the recording path: recordAt against record alone, one message every
// 10 µs of intended time (bins 100 ms wide), harvested every second of intended time as the
// sampler would.
func BenchmarkRecordAt(b *testing.B) {
	for _, binned := range []bool{false, true} {
		name := "record"
		if binned {
			name = "recordAt"
		}
		b.Run(name, func(b *testing.B) {
			rec := newRecorder(100 * time.Millisecond)
			into := map[results.BinKey]*hdrhistogram.Histogram{}
			merged := map[string]*hdrhistogram.Histogram{KindProduce: results.NewHistogram(), KindSendDelay: results.NewHistogram(), KindE2E: results.NewHistogram()}
			warm := map[string]*hdrhistogram.Histogram{KindProduce: results.NewHistogram(), KindSendDelay: results.NewHistogram(), KindE2E: results.NewHistogram()}
			for i := 0; i < b.N; i++ {
				intended := int64(i) * 10_000
				if binned {
					rec.recordAt(KindProduce, intended, intended+400_000, true)
				} else {
					rec.record(KindProduce, 400_000, true)
				}
				if i%100_000 == 0 {
					rec.harvest(merged, warm, into)
				}
			}
		})
	}
}
