package results

import (
	"fmt"

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
	return Latency{
		Count: h.TotalCount(),
		Min:   h.Min(),
		Mean:  h.Mean(),
		P50:   h.ValueAtPercentile(50),
		P90:   h.ValueAtPercentile(90),
		P99:   h.ValueAtPercentile(99),
		P999:  h.ValueAtPercentile(99.9),
		P9999: h.ValueAtPercentile(99.99),
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
