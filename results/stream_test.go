package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func streamInterval(t *testing.T, startS int64, warm bool, values ...int64) Interval {
	t.Helper()
	h := NewHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	iv := Interval{StartNs: startS * int64(time.Second), Warmup: warm, Acked: int64(len(values)), Deliveries: int64(len(values)),
		Histograms: map[string]string{"produce": enc}}
	if warm {
		iv.WarmupHistograms = map[string]string{"produce": enc}
	}
	return iv
}

// The side file reads back what was appended; a torn last line (a kill mid-write) is left out and
// counted, damage before the end is an error naming the line.
func TestSeriesFileRoundTripAndTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json"+SeriesFileSuffix)
	w, err := CreateSeriesFile(path, &Result{SchemaVersion: SchemaVersion, RunID: "x", Checkpoint: &Checkpoint{DurationSeconds: 60}})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 4; i++ {
		if err := w.Append(streamInterval(t, i, i == 0, 1000_000, 2000_000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(path)
	cases := []struct {
		name      string
		data      string
		intervals int
		torn      int
		err       string
	}{
		{"whole", string(whole), 4, 0, ""},
		{"torn tail", string(whole) + `{"start_ns":4000000000,"ack`, 4, 1, ""},
		{"damage inside", strings.Replace(string(whole), `{"start_ns":2000000000`, `{"start_ns":2x`, 1), 0, 0, ":4: "},
		{"not a series file", "hello\n", 0, 0, ":1: not a qbench series file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
			sf, err := ReadSeriesFile(p)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sf.Series) != c.intervals || sf.TornLines != c.torn || sf.Header.RunID != "x" {
				t.Errorf("%d intervals, %d torn, run %q; want %d, %d, x", len(sf.Series), sf.TornLines, sf.Header.RunID, c.intervals, c.torn)
			}
		})
	}
}

// A checkpoint's summary leaves the warm-up out, as a finished run's does, and ReadFile computes
// it again from the side file the checkpoint references.
func TestCheckpointSummaryFromSideFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	header := &Result{SchemaVersion: SchemaVersion, RunID: "x", Checkpoint: &Checkpoint{DurationSeconds: 60}}
	w, err := CreateSeriesFile(SeriesFileFor(out), header)
	if err != nil {
		t.Fatal(err)
	}
	totals := NewSeriesTotals()
	for i := int64(0); i < 5; i++ {
		iv := streamInterval(t, i, i == 0, 1000_000, 3000_000)
		if err := w.Append(iv); err != nil {
			t.Fatal(err)
		}
		if i < 2 { // the checkpoint saw two seconds; the run went on to five
			if err := totals.Add(iv); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ck := *header
	ck.SeriesFile = filepath.Base(SeriesFileFor(out))
	if err := totals.Fill(&ck); err != nil {
		t.Fatal(err)
	}
	if got := ck.Summary.Latency["produce"].Count; got != 2 {
		t.Fatalf("checkpoint at 2 s: produce count %d, want 2 (the warm-up second left out)", got)
	}
	if err := WriteFileAtomic(out, &ck); err != nil {
		t.Fatal(err)
	}
	r, err := ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if len(r.Series) != 5 || s.Latency["produce"].Count != 8 || s.Ledger.Acked != 10 || s.MeasuredSeconds != 4 || r.Checkpoint.CoveredSeconds != 5 {
		t.Errorf("read back: %d seconds, produce count %d, acked %d, measured %.1f s, covered %.1f s; want 5, 8, 10, 4, 5",
			len(r.Series), s.Latency["produce"].Count, s.Ledger.Acked, s.MeasuredSeconds, r.Checkpoint.CoveredSeconds)
	}
	if h := CheckpointHeadline(r); !strings.HasPrefix(h, "PARTIAL: CHECKPOINT") || !strings.Contains(h, "first 5s of 1m0s") {
		t.Errorf("headline %q", h)
	}
	var sum strings.Builder
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "not known until the end") || strings.Contains(sum.String(), "lost 0") {
		t.Errorf("summary does not say lost is not known:\n%s", sum.String())
	}
}
