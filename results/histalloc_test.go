package results

import (
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// randomHistograms are histograms of qbench's range with assorted shapes: empty, one value,
// latencies from microseconds to seconds, a tail at the top of the range, runs of zeros.
func randomHistograms(t *testing.T) []*hdrhistogram.Histogram {
	t.Helper()
	rng := rand.New(rand.NewSource(16))
	hs := []*hdrhistogram.Histogram{NewHistogram()}
	one := NewHistogram()
	_ = one.RecordValue(1_000)
	hs = append(hs, one)
	top := NewHistogram()
	_ = top.RecordValue(HistHighest)
	_ = top.RecordValues(5_000, 1<<40) // a count whose encoding needs many bytes
	hs = append(hs, top)
	for range 40 {
		h := NewHistogram()
		n := rng.Intn(5000)
		scale := []float64{1e3, 1e5, 1e7, 1e9}[rng.Intn(4)]
		for range n {
			v := int64(rng.ExpFloat64() * scale)
			if err := h.RecordValue(min(max(v, 0), HistHighest)); err != nil {
				t.Fatal(err)
			}
		}
		hs = append(hs, h)
	}
	return hs
}

// The pooled encoder writes exactly what hdrhistogram-go's Encode writes, and decodes back.
func TestEncodeHistogramMatchesLibrary(t *testing.T) {
	for i, h := range randomHistograms(t) {
		want, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Fatalf("histogram %d (count %d, max %d): encoding differs from hdrhistogram-go's\n got %.80s\nwant %.80s", i, h.TotalCount(), h.Max(), got, want)
		}
		back, err := DecodeHistogram(got)
		if err != nil || !back.Equals(h) {
			t.Fatalf("histogram %d: does not decode back (%v)", i, err)
		}
	}
}

// distributionPercentiles is ValuesAtPercentiles as it was, walking Distribution: the reference
// for the allocation-free version.
func distributionPercentiles(h *hdrhistogram.Histogram, ps []float64) []int64 {
	out := make([]int64, len(ps))
	total := h.TotalCount()
	if total == 0 {
		return out
	}
	found := make([]bool, len(ps))
	var seen int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		seen += b.Count
		for i, p := range ps {
			if !found[i] && seen >= percentileRank(p, total) {
				out[i], found[i] = b.To, true
				if p == 0 {
					out[i] = b.From
				}
			}
		}
	}
	return out
}

func TestValuesAtPercentilesMatchDistributionWalk(t *testing.T) {
	ps := []float64{0, 1, 25, 50, 90, 99, 99.9, 99.99, 99.999, 100, 33.3333, 50}
	for i, h := range randomHistograms(t) {
		got, want := ValuesAtPercentiles(h, ps), distributionPercentiles(h, ps)
		for j := range ps {
			if got[j] != want[j] {
				t.Fatalf("histogram %d (count %d): p%v = %d, the bucket walk says %d", i, h.TotalCount(), ps[j], got[j], want[j])
			}
		}
	}
}

// The sampler summarises and encodes every latency kind once a second: neither may allocate in
// proportion to the histogram (the garbage that set how often the GC ran).
func TestSummariseAndEncodeAllocateLittle(t *testing.T) {
	h := NewHistogram()
	for v := int64(1_000); v < 200_000_000; v = v*11/10 + 1 {
		_ = h.RecordValue(v)
	}
	if a := testing.AllocsPerRun(20, func() { Summarise(h) }); a > 3 {
		t.Errorf("Summarise: %v allocations a call, want at most 3", a)
	}
	EncodeHistogram(h) // warm the pool
	// Bytes, not allocations: the counts' copy and the output are a handful of allocations,
	// a new zlib writer is most of a MiB.
	var before, after runtimeMem
	before.read()
	for range 20 {
		if _, err := EncodeHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	after.read()
	perCall := (after.bytes - before.bytes) / 20
	if limit := uint64(h.ByteSize() + 64<<10); perCall > limit {
		t.Errorf("EncodeHistogram allocates %d bytes a call, want at most %d (the counts' copy and the output)", perCall, limit)
	}
}

// runtimeMem reads the total bytes allocated so far.
type runtimeMem struct{ bytes uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.bytes = s.TotalAlloc
}

// Encoders are shared: concurrent encodings (a sweep writing results while a run samples) each
// get their own and still match the library.
func TestEncodeHistogramConcurrently(t *testing.T) {
	hs := randomHistograms(t)
	want := make([]string, len(hs))
	for i, h := range hs {
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = string(b)
	}
	errs := make(chan string, 8*len(hs))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range hs {
				i := (k + g) % len(hs)
				if got, err := EncodeHistogram(hs[i]); err != nil || got != want[i] {
					errs <- fmt.Sprintf("goroutine %d, histogram %d: %v", g, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
