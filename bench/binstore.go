package bench

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// binStore is the run's latency bins, harvested from every recorder each second (results/bins.go):
// a bin still filling as a histogram (hot, the map the recorders harvest into), and a bin no
// recorder touched for a whole harvest in its encoded form (cold: HdrHistogram's compressed V2
// encoding, some 100 bytes against 3.9 KB a histogram). A run has up to MaxBins bins per series,
// two kinds in two clocks, so held as histograms they grew through the run to about 47 MB
// (and several times that in heap the collector lets grow before it runs); encoded, a few MB. A
// message of a cold bin answered late (a backlog's, in the intended clock) lands in a fresh
// histogram, merged with the cold one when it goes quiet again and at the end.
type binStore struct {
	hot map[results.BinKey]*hdrhistogram.Histogram
	// counts is each hot bin's count at the last settle: unchanged at the next, it is quiet.
	counts map[results.BinKey]int64
	cold   map[results.BinKey]string
}

func newBinStore() *binStore {
	return &binStore{hot: map[results.BinKey]*hdrhistogram.Histogram{}, counts: map[results.BinKey]int64{}, cold: map[results.BinKey]string{}}
}

// settle encodes the hot bins no harvest added to since the last settle. The sampler calls it
// after each harvest.
func (b *binStore) settle() {
	for k, h := range b.hot {
		n := h.TotalCount()
		if last, ok := b.counts[k]; !ok || last != n {
			b.counts[k] = n
			continue
		}
		whole, err := b.merged(k, h)
		if err != nil {
			continue // kept hot: the end merges it with its cold part
		}
		enc, err := results.EncodeHistogram(whole)
		if err != nil {
			continue
		}
		b.cold[k] = enc
		delete(b.hot, k)
		delete(b.counts, k)
	}
}

// merged is bin k whole: h (its hot part) with its cold part, if it has one.
func (b *binStore) merged(k results.BinKey, h *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	enc, ok := b.cold[k]
	if !ok {
		return h, nil
	}
	whole, err := results.DecodeHistogram(enc)
	if err != nil {
		return nil, err
	}
	whole.Merge(h)
	return whole, nil
}

// each calls fn with every bin whole, one at a time (a cold bin decoded for the call only).
func (b *binStore) each(fn func(results.BinKey, *hdrhistogram.Histogram)) {
	for k, h := range b.hot {
		if whole, err := b.merged(k, h); err == nil {
			fn(k, whole)
		} else {
			fn(k, h)
		}
	}
	for k, enc := range b.cold {
		if _, ok := b.hot[k]; ok {
			continue
		}
		if h, err := results.DecodeHistogram(enc); err == nil {
			fn(k, h)
		}
	}
}

// heldBytes is what the bins hold: the hot histograms' counts and the cold encodings.
func (b *binStore) heldBytes() int64 {
	var n int64
	for _, h := range b.hot {
		n += int64(h.ByteSize())
	}
	for _, enc := range b.cold {
		n += int64(len(enc))
	}
	return n
}
