package bench

import (
	"math/rand/v2"
	"reflect"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// The bins a run keeps encoded once quiet give the series the plain histograms give, with late
// values for a quiet bin (a backlog's, in the intended clock) merged in; the quiet bins hold a
// small part of the histograms' bytes.
func TestBinStoreKeepsQuietBinsEncoded(t *testing.T) {
	const width = int64(1e9)
	rng := rand.New(rand.NewPCG(5, 6))
	plain := map[results.BinKey]*hdrhistogram.Histogram{}
	store := newBinStore()
	record := func(k results.BinKey, v int64) {
		for _, m := range []map[results.BinKey]*hdrhistogram.Histogram{plain, store.hot} {
			h := m[k]
			if h == nil {
				h = results.NewBinHistogram()
				m[k] = h
			}
			_ = h.RecordValue(v)
		}
	}
	for sec := int64(0); sec < 600; sec++ {
		for range 200 {
			v := 100_000 + rng.Int64N(50_000_000)
			record(results.BinKey{E2E: true, Index: sec}, v)
			record(results.BinKey{Index: sec}, v/3)
			record(results.BinKey{Intended: true, E2E: true, Index: sec}, v)
		}
		if sec%50 == 49 { // a backlog intended long ago, delivered now
			for range 20 {
				record(results.BinKey{Intended: true, E2E: true, Index: sec - 40}, 30e9+rng.Int64N(1e9))
			}
		}
		store.settle()
	}
	if len(store.cold) < 3*590 {
		t.Fatalf("%d bins encoded, %d hot: quiet bins were not encoded", len(store.cold), len(store.hot))
	}
	want := results.BuildLatencySeries(width, plain)
	got := results.BuildLatencySeriesFrom(width, store.each)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the encoded bins' series differs from the histograms'")
	}
	var plainBytes int64
	for _, h := range plain {
		plainBytes += int64(h.ByteSize())
	}
	held := store.heldBytes()
	t.Logf("%d bins: %d bytes as histograms, %d held (%.1f%%)", len(plain), plainBytes, held, 100*float64(held)/float64(plainBytes))
	if held*5 > plainBytes {
		t.Fatalf("the store holds %d bytes of the histograms' %d", held, plainBytes)
	}
}
