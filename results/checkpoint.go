package results

import (
	"fmt"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A long run writes a checkpoint every few minutes: a normal result file, written atomically
// over the run's -o path, whose figures are computed from the seconds streamed so far and whose
// series is its side file (SeriesFile). A run that ends normally replaces it with its result; a
// run that is killed leaves it, and every reader (ReadFile) then reads the side file's seconds,
// up to the kill, and computes the summary again from them. What only the end of a run knows
// (which messages were delivered once, are still queued, were lost or duplicated: the ledger's
// final sweep) is not known, says so (NotKnown, the headline), and the result is flagged.

// Checkpoint marks a result written while its run was still going, or recovered from one.
type Checkpoint struct {
	// CoveredSeconds is how far into the run (since its epoch) the series reaches.
	CoveredSeconds float64 `json:"covered_seconds"`
	// DurationSeconds is the scenario's duration: what the run would have covered.
	DurationSeconds float64 `json:"duration_seconds,omitempty"`
	// WrittenAt is when the checkpoint was written.
	WrittenAt time.Time `json:"written_at"`
	// Recovered marks a result qbench recover made from a checkpoint (or the side file alone) of
	// a run that never finished.
	Recovered bool `json:"recovered,omitempty"`
	// TornLines counts side-file lines cut short by the kill, left out.
	TornLines int `json:"torn_lines,omitempty"`
}

// CheckpointNotKnown are the ledger fields a checkpoint cannot know: they come from matching
// every message against its deliveries and the final sweep, at the end of the run.
var CheckpointNotKnown = []string{"delivered", "queued", "lost", "duplicates", "reordered", "delivered_unacked", "phantom", "faults.lost"}

// CheckpointHeadline is the first line of a checkpoint's summary; "" for a finished run.
func CheckpointHeadline(r *Result) string {
	c := r.Checkpoint
	if c == nil {
		return ""
	}
	what := "CHECKPOINT: the run was still going when this was written"
	if c.Recovered {
		what = "RECOVERED: the run never finished (killed or crashed); rebuilt from its checkpoint and side file"
	}
	of := ""
	if c.DurationSeconds > 0 {
		of = fmt.Sprintf(" of %s", fmtSeconds(c.DurationSeconds))
	}
	s := fmt.Sprintf("PARTIAL: %s: figures cover the first %s%s; delivered, queued, lost and duplicates are not known until the end", what, fmtSeconds(c.CoveredSeconds), of)
	if c.TornLines > 0 {
		s += fmt.Sprintf(" (%d torn last line of the side file left out)", c.TornLines)
	}
	return s
}

func fmtSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// SeriesTotals sums a series one interval at a time: what a checkpoint's summary needs, without
// keeping the intervals (a day's run has 86,400).
type SeriesTotals struct {
	measured             map[string]*hdrhistogram.Histogram
	dropped              int64
	measuredNs           int64
	acked, failed        int64
	deliveries           int64
	mAckedBytes, mDeliv  int64
	mDeliveries          int64
	lagMax, engineLagMax int64
	prev                 *Interval // its length is known when the next one starts
	endNs                int64
}

// NewSeriesTotals returns empty totals.
func NewSeriesTotals() *SeriesTotals {
	t := &SeriesTotals{measured: map[string]*hdrhistogram.Histogram{}}
	for _, k := range LatencyKinds {
		t.measured[k] = NewHistogram()
	}
	return t
}

// Add counts one interval.
func (t *SeriesTotals) Add(iv Interval) error {
	t.close(iv.StartNs)
	for _, k := range LatencyKinds {
		if iv.Histograms[k] == "" {
			continue
		}
		m, _, err := intervalParts(iv, k)
		if err != nil {
			return fmt.Errorf("interval at %s: %s: %w", FormatNs(iv.StartNs), k, err)
		}
		t.dropped += t.measured[k].Merge(m)
	}
	t.acked += iv.Acked
	t.failed += iv.Failed
	t.deliveries += iv.Deliveries
	if !iv.Warmup {
		t.mAckedBytes += iv.AckedBytes
		t.mDeliv += iv.DeliveredBytes
		t.mDeliveries += iv.Deliveries
	}
	t.lagMax = max(t.lagMax, iv.Lag)
	t.engineLagMax = max(t.engineLagMax, iv.EngineLag.Total())
	c := iv
	c.Histograms, c.WarmupHistograms, c.Health = nil, nil, nil
	t.prev = &c
	t.endNs = iv.StartNs + int64(time.Second)
	return nil
}

// close ends the previous interval at endNs (the next one's start).
func (t *SeriesTotals) close(endNs int64) {
	if t.prev != nil && !t.prev.Warmup {
		t.measuredNs += max(endNs-t.prev.StartNs, 0)
	}
	t.prev = nil
}

// Fill sets r's summary figures, histograms and Checkpoint.CoveredSeconds from the totals, and
// names what a checkpoint cannot know. The header's own fields (offered rate, groups, role) stay.
func (t *SeriesTotals) Fill(r *Result) error {
	measuredNs := t.measuredNs
	if t.prev != nil && !t.prev.Warmup {
		measuredNs += int64(time.Second) // the last second, still open
	}
	s := &r.Summary
	s.Latency = map[string]Latency{}
	r.Histograms = map[string]string{}
	for _, k := range LatencyKinds {
		s.Latency[k] = Summarise(t.measured[k])
		enc, err := EncodeHistogram(t.measured[k])
		if err != nil {
			return fmt.Errorf("encoding %s histogram: %w", k, err)
		}
		r.Histograms[k] = enc
	}
	secs := time.Duration(measuredNs).Seconds()
	s.MeasuredSeconds = secs
	s.ProduceRate, s.ProduceBytesRate, s.DeliverRate, s.DeliverRatePerGroup, s.DeliverBytesRate = 0, 0, 0, 0, 0
	if secs > 0 {
		s.ProduceRate = float64(s.Latency["produce"].Count) / secs
		s.ProduceBytesRate = float64(t.mAckedBytes) / secs
		s.DeliverRate = float64(t.mDeliveries) / secs
		s.DeliverRatePerGroup = s.DeliverRate / float64(max(s.Groups, 1))
		s.DeliverBytesRate = float64(t.mDeliv) / secs
	}
	s.Groups = max(s.Groups, 1)
	s.Ledger = Ledger{Sent: t.acked + t.failed, Acked: t.acked, Failed: t.failed, Deliveries: t.deliveries}
	s.LagMax, s.EngineLagMax = t.lagMax, t.engineLagMax
	s.HistogramDropped = t.dropped
	for _, f := range CheckpointNotKnown {
		if !slices.Contains(s.NotKnown, f) {
			s.NotKnown = append(s.NotKnown, f)
		}
	}
	if r.Checkpoint == nil {
		r.Checkpoint = &Checkpoint{}
	}
	r.Checkpoint.CoveredSeconds = time.Duration(t.endNs).Seconds()
	return nil
}

// SummariseSeries computes a checkpoint's summary from its whole series (SeriesTotals).
func SummariseSeries(r *Result) error {
	t := NewSeriesTotals()
	for _, iv := range r.Series {
		if err := t.Add(iv); err != nil {
			return err
		}
	}
	return t.Fill(r)
}

// writeCheckpointLedger prints a checkpoint's messages line: what the intervals counted, and
// what only the end of the run knows.
func writeCheckpointLedger(w interface{ Write([]byte) (int, error) }, r *Result) {
	l := r.Summary.Ledger
	fmt.Fprintf(w, "messages: sent %d, acked %d, failed %d, deliveries %d (duplicates included); delivered, queued, lost and duplicates not known until the end (a checkpoint)\n",
		l.Sent, l.Acked, l.Failed, l.Deliveries)
}
