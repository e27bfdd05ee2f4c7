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
// hdrhistogram-go's own Encode gives the same bytes; encodeV2 reuses its zlib writer.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	return encodeV2(h)
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
// It allocates only its result (hdrhistogram-go's Distribution, used before, built a slice of
// every bucket up to the maximum, hundreds of KiB per call: the largest share of the sampler's
// once-a-second garbage, which set how often the GC ran at 10,000 msg/s). Each Java rank is handed
// to hdrhistogram-go's allocation-free ValueAtPercentilesSlice as the percentile that its own
// rounding (to nearest) maps back to exactly that rank.
func ValuesAtPercentiles(h *hdrhistogram.Histogram, ps []float64) []int64 {
	total := h.TotalCount()
	if total == 0 {
		return make([]int64, len(ps))
	}
	var buf [8]float64
	goPs := buf[:0]
	for _, p := range ps {
		if p <= 0 {
			goPs = append(goPs, 0) // rank 1 both ways; the lowest equivalent value
			continue
		}
		// hdrhistogram-go's rank is int(p/100*total + 0.5): R*100/total gives R within a few
		// ulps of R*(1+eps), far from the rounding boundary at R+0.5.
		goPs = append(goPs, float64(percentileRank(p, total))*100/float64(total))
	}
	return h.ValueAtPercentilesSlice(goPs)
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
