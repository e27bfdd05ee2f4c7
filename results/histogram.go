package results

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 us resolution floor to 1 hour, 3 significant digits. Values are nanoseconds.
const (
	HistLowest  = 1_000
	HistHighest = 3_600_000_000_000
	HistSigFigs = 3
)

// NewHistogram returns an empty histogram with qbench's range.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, HistSigFigs)
}

// Summarise reads the standard percentiles from h.
func Summarise(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	v := ValuesAtPercentiles(h, []float64{50, 90, 99, 99.9, 99.99})
	return Latency{
		Count: h.TotalCount(),
		Min:   h.Min(),
		Mean:  h.Mean(),
		P50:   v[0],
		P90:   v[1],
		P99:   v[2],
		P999:  v[3],
		P9999: v[4],
		Max:   h.Max(),
	}
}

// EncodeHistogram returns HdrHistogram's compressed V2 encoding in base64 ("HISTF..."), the form
// HdrHistogram's tools in every language read.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

// DecodeHistogram reverses EncodeHistogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	return h, nil
}

// ValueAtPercentile is the value at percentile p (0 to 100) as HdrHistogram's reference (Java)
// implementation computes it: the rank is p% of the count rounded UP (after taking one ulp off p,
// so that an exact rank is not pushed to the next value by float error), at least 1, and the
// value is the highest equivalent value of the bucket holding that rank (the lowest at p = 0).
// hdrhistogram-go (and the Python package's get_value_at_percentile) round the rank to nearest
// instead, so when p% of the count has a fraction below one half they report the value one rank
// lower: 594.02 ms where Java says 596.12 ms. testdata/percentiles holds Java's and Python's
// figures for a dozen histograms.
func ValueAtPercentile(h *hdrhistogram.Histogram, p float64) int64 {
	return ValuesAtPercentiles(h, []float64{p})[0]
}

// ValuesAtPercentiles is ValueAtPercentile for several percentiles in one pass over the counts.
func ValuesAtPercentiles(h *hdrhistogram.Histogram, ps []float64) []int64 {
	out := make([]int64, len(ps))
	total := h.TotalCount()
	if total == 0 {
		return out
	}
	ranks, found := make([]int64, len(ps)), make([]bool, len(ps))
	for i, p := range ps {
		ranks[i] = percentileRank(p, total)
	}
	done := 0
	var seen int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		seen += b.Count
		for i := range ps {
			if !found[i] && seen >= ranks[i] {
				out[i], found[i] = b.To, true
				if ps[i] == 0 {
					out[i] = b.From
				}
				done++
			}
		}
		if done == len(ps) {
			break
		}
	}
	return out
}

// percentileRank is Java's AbstractHistogram.getValueAtPercentile rank: ceil of the requested
// fraction of the count, with p clamped to 0..100 and one ulp taken off first.
func percentileRank(p float64, total int64) int64 {
	req := math.Min(math.Max(math.Nextafter(p, math.Inf(-1)), 0), 100)
	rank := int64(math.Ceil(req / 100 * float64(total)))
	if rank < 1 {
		rank = 1
	}
	return rank
}
