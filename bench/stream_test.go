package bench_test

import (
	"context"
	"sync"
	"testing"

	"qbench/bench"
	"qbench/results"
)

// sink collects what a run streams; keep says whether it keeps the series (SeriesKeeper).
type sink struct {
	mu     sync.Mutex
	header *results.Result
	series []results.Interval
	keep   bool
	// readBack counts SeriesBack's calls.
	readBack int
}

func (s *sink) Begin(h *results.Result) { s.mu.Lock(); s.header = h; s.mu.Unlock() }
func (s *sink) Interval(iv results.Interval) {
	s.mu.Lock()
	s.series = append(s.series, iv)
	s.mu.Unlock()
}
func (s *sink) KeepsSeries() bool { return s.keep }

// SeriesBack is what a file would give back: the series without histograms and health.
func (s *sink) SeriesBack() ([]results.Interval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readBack++
	var out []results.Interval
	for _, iv := range s.series {
		iv.Histograms, iv.WarmupHistograms, iv.Health = nil, nil, nil
		out = append(out, iv)
	}
	return out, nil
}

// A run streams its header and every second of its series, offered counts filled as the result's
// are; a sink that keeps the series takes the per-second histograms out of the runner's memory
// (the result's series lacks them, the sink's has them), and the run's figures are the same.
func TestStreamedSeriesMatchesResult(t *testing.T) {
	for _, keep := range []bool{false, true} {
		name := "embeds"
		if keep {
			name = "keeps"
		}
		t.Run(name, func(t *testing.T) {
			sc := scenario(t, "engine: embedded\ndesign: stream\nproducers: 1\nconsumers: 1\nrate: 1000\nduration: 2s\nwarmup: 500ms\n")
			s := &sink{keep: keep}
			ctx := context.Background()
			res, err := bench.Run(ctx, ctx, sc, bench.Options{Logf: t.Logf, Stream: s})
			if err != nil {
				t.Fatal(err)
			}
			if s.header == nil || s.header.RunID != res.RunID || s.header.Summary.OfferedRate != 1000 {
				t.Fatalf("header %+v, want the run's ID and offered rate", s.header)
			}
			if len(s.series) != len(res.Series) {
				t.Fatalf("streamed %d seconds, the result has %d", len(s.series), len(res.Series))
			}
			for i, iv := range s.series {
				r := res.Series[i]
				if iv.StartNs != r.StartNs || iv.Acked != r.Acked || iv.Offered != r.Offered {
					t.Errorf("second %d: streamed start %d acked %d offered %d, result %d %d %d", i, iv.StartNs, iv.Acked, iv.Offered, r.StartNs, r.Acked, r.Offered)
				}
				if iv.Acked > 0 && iv.Histograms["produce"] == "" {
					t.Errorf("second %d: streamed without its histogram", i)
				}
				if inMemory := r.Histograms["produce"] != ""; iv.Acked > 0 && inMemory == keep {
					t.Errorf("second %d: result's series holds its histogram: %v, want %v", i, inMemory, !keep)
				}
			}
			if want := map[bool]int{false: 0, true: 1}[keep]; s.readBack != want {
				t.Errorf("the series was read back %d times, want %d", s.readBack, want)
			}
			if n := res.Summary.Latency["produce"].Count; n != 1500 {
				t.Errorf("measured produce count %d, want 1500", n)
			}
		})
	}
}
