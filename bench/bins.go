package bench

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"qbench/results"
)

// binner is one recorder's latency bins since the sampler last harvested them (results/bins.go):
// each message's latency goes to the bin of its intended send time and to the bin of its
// completion. Between two harvests a recorder touches few bins (the current one, and the ones a
// backlog was intended in), so the map stays small; the last bin of each series and kind is
// cached, as nearly every message lands in it.
type binner struct {
	widthNs int64
	hists   map[results.BinKey]*hdrhistogram.Histogram
	last    [2][2]struct {
		index int64
		h     *hdrhistogram.Histogram
	}
	spare []*hdrhistogram.Histogram // reset histograms for new bins
}

func newBinner(width time.Duration) binner {
	return binner{widthNs: int64(width), hists: map[results.BinKey]*hdrhistogram.Histogram{}}
}

// add records one latency (atNs - intendedNs) in both clocks' bins. Caller holds the recorder.
func (b *binner) add(e2e bool, intendedNs, atNs int64) {
	if b.widthNs <= 0 {
		return
	}
	ns := min(max(atNs-intendedNs, 0), results.HistHighest)
	k := 0
	if e2e {
		k = 1
	}
	for by, t := range [2]int64{atNs, intendedNs} {
		idx := max(t, 0) / b.widthNs
		c := &b.last[by][k]
		if c.h == nil || c.index != idx {
			key := results.BinKey{Intended: by == 1, E2E: e2e, Index: idx}
			h := b.hists[key]
			if h == nil {
				h = b.newHist()
				b.hists[key] = h
			}
			c.index, c.h = idx, h
		}
		_ = c.h.RecordValue(ns) // out of range is counted by record
	}
}

func (b *binner) newHist() *hdrhistogram.Histogram {
	if n := len(b.spare); n > 0 {
		h := b.spare[n-1]
		b.spare = b.spare[:n-1]
		return h
	}
	return results.NewBinHistogram()
}

// harvest merges the bins into into and empties them. Caller holds the recorder.
func (b *binner) harvest(into map[results.BinKey]*hdrhistogram.Histogram) {
	for key, h := range b.hists {
		dst := into[key]
		if dst == nil {
			dst = results.NewBinHistogram()
			into[key] = dst
		}
		dst.Merge(h)
		h.Reset()
		b.spare = append(b.spare, h)
		delete(b.hists, key)
	}
	b.last = [2][2]struct {
		index int64
		h     *hdrhistogram.Histogram
	}{}
}
