package bench

import (
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// Harvests swap the recorder's histograms rather than merging under its lock: values recorded
// while harvests run are each counted once, in the interval series and the bins alike.
func TestRecorderHarvestSwapCountsEveryValueOnce(t *testing.T) {
	rec := newRecorder(100 * time.Millisecond)
	const n = 200_000
	into := map[string]*hdrhistogram.Histogram{}
	warm := map[string]*hdrhistogram.Histogram{}
	for _, k := range kinds {
		into[k], warm[k] = results.NewHistogram(), results.NewHistogram()
	}
	bins := map[results.BinKey]*hdrhistogram.Histogram{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range int64(n) {
			rec.mu.Lock()
			rec.recordAt(KindProduce, i*1000, i*1000+5_000, i%3 == 0) // a third measured, the rest warm-up
			rec.mu.Unlock()
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	harvests := 0
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		default:
		}
		rec.harvest(into, warm, bins)
		harvests++
	}
	rec.harvest(into, warm, bins)
	if got := into[KindProduce].TotalCount(); got != n {
		t.Fatalf("harvested %d values over %d harvests, recorded %d", got, harvests, n)
	}
	if got, want := warm[KindProduce].TotalCount(), int64(n-(n+2)/3); got != want {
		t.Fatalf("warm-up part %d, want %d", got, want)
	}
	var inBins int64
	for key, h := range bins {
		if !key.E2E && !key.Intended {
			inBins += h.TotalCount()
		}
	}
	if inBins != n {
		t.Fatalf("bins by receipt hold %d values, recorded %d", inBins, n)
	}
	t.Logf("%d harvests", harvests)
}
