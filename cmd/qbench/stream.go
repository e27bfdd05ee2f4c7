package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"qbench/bench"
	"qbench/results"
)

// A run with -o streams its series to RESULT.json.series.jsonl as it goes and, every
// --checkpoint, writes a checkpoint result over RESULT.json (results/stream.go, checkpoint.go).
// The finished result embeds the series and replaces both; a run killed leaves them, and every
// reader reads the checkpoint with the side file's seconds up to the kill.

// Checkpoints by default: every autoCheckpointEvery for a run longer than autoCheckpointAfter
// (a short run loses little to a kill, and a checkpoint's write is not free).
const (
	autoCheckpointAfter = 10 * time.Minute
	autoCheckpointEvery = time.Minute
)

// checkpointEvery reads --checkpoint: "" is the default for the run's length, "off" or 0 none.
func checkpointEvery(flag string, duration time.Duration) (time.Duration, error) {
	switch flag {
	case "":
		if duration > autoCheckpointAfter {
			return autoCheckpointEvery, nil
		}
		return 0, nil
	case "off", "0":
		return 0, nil
	}
	d, err := time.ParseDuration(flag)
	if err != nil || d < 0 {
		return 0, usageError{fmt.Errorf("--checkpoint %q: want a duration (5m) or off", flag)}
	}
	return d, nil
}

// streamer is the run's bench.SeriesSink: the sampler hands it each second, and its own
// goroutine appends to the side file and writes checkpoints, so a slow disk never holds the
// sampler.
type streamer struct {
	out, side string
	every     time.Duration
	// keep: the series file is the result's series (a checkpointed run, not a segment): the
	// runner drops the per-second histograms from its memory, and the result references the
	// file (writeFinal).
	keep bool
	logf func(string, ...any)
	ch   chan streamItem
	done chan struct{}
	// broken is set once streaming failed: the runner keeps what it has from then on, and the
	// result embeds its series.
	broken atomic.Bool

	// Owned by the loop's goroutine.
	header   *results.Result
	w        *results.SeriesWriter
	totals   *results.SeriesTotals
	lastCkpt time.Time
	failed   bool

	finished sync.Once
}

type streamItem struct {
	header *results.Result
	iv     results.Interval
	// written, when set, is closed once every item before it is written (SeriesBack).
	written chan struct{}
}

func newStreamer(out string, every time.Duration, logf func(string, ...any)) *streamer {
	s := &streamer{out: out, side: results.SeriesFileFor(out), every: every, logf: logf,
		ch: make(chan streamItem, 256), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *streamer) Begin(h *results.Result)      { s.ch <- streamItem{header: h} }
func (s *streamer) Interval(iv results.Interval) { s.ch <- streamItem{iv: iv} }
func (s *streamer) KeepsSeries() bool            { return s.keep && !s.broken.Load() }

// SeriesBack reads the series file back without histograms and health, once every interval
// handed in before is written. A series file that failed gives back what it holds.
func (s *streamer) SeriesBack() ([]results.Interval, error) {
	written := make(chan struct{})
	s.ch <- streamItem{written: written}
	<-written
	sf, err := results.ReadSeriesFileSlim(s.side)
	if err != nil {
		return nil, err
	}
	return sf.Series, nil
}

func (s *streamer) loop() {
	defer close(s.done)
	for it := range s.ch {
		if it.written != nil {
			close(it.written)
			continue
		}
		if s.failed {
			continue
		}
		if it.header != nil {
			s.begin(it.header)
			continue
		}
		if s.w == nil {
			continue
		}
		if err := s.w.Append(it.iv); err != nil {
			s.fail("the series file", err)
			continue
		}
		if err := s.totals.Add(it.iv); err != nil {
			s.fail("the checkpoint's totals", err)
			continue
		}
		if s.every > 0 && time.Since(s.lastCkpt) >= s.every {
			s.lastCkpt = time.Now()
			if err := s.checkpoint(); err != nil {
				s.fail("a checkpoint", err)
			}
		}
	}
}

func (s *streamer) begin(h *results.Result) {
	s.header = h
	w, err := results.CreateSeriesFile(s.side, h)
	if err != nil {
		s.fail("the series file", err)
		return
	}
	s.w, s.totals, s.lastCkpt = w, results.NewSeriesTotals(), time.Now()
}

// fail stops streaming for the rest of the run, and says so: the run itself goes on, and its
// result is written at the end as always.
func (s *streamer) fail(what string, err error) {
	s.failed = true
	s.broken.Store(true)
	s.logf("writing %s failed, streaming stopped (the result is still written at the end): %v", what, err)
}

// checkpoint writes the result so far over the run's -o path, atomically.
func (s *streamer) checkpoint() error {
	c := *s.header
	ck := *s.header.Checkpoint
	ck.WrittenAt = time.Now().UTC()
	c.Checkpoint = &ck
	c.SeriesFile = filepath.Base(s.side)
	if err := s.totals.Fill(&c); err != nil {
		return err
	}
	return results.WriteFileAtomic(s.out, &c)
}

// finish ends streaming once the run returned: the side file is closed, and removed when the
// final result (which embeds the series) was written.
// A nil streamer (no -o) has nothing to finish; the first call decides. written removes the
// series file.
func (s *streamer) finish(written bool) {
	if s == nil {
		return
	}
	s.finished.Do(func() {
		close(s.ch)
		<-s.done
		if s.w != nil {
			if err := s.w.Close(); err != nil && !s.failed {
				s.logf("closing %s: %v", s.side, err)
			}
		}
		if written {
			os.Remove(s.side)
		}
	})
}

// streamFlag adds --checkpoint to run.
func streamFlag(cmd *cobra.Command, every *string) {
	cmd.Flags().StringVar(every, "checkpoint", "", "with -o, write a checkpoint result over it this often while the run goes (5m; off); the default is every "+autoCheckpointEvery.String()+" for runs longer than "+autoCheckpointAfter.String()+", off otherwise. The series streams to RESULT.json"+results.SeriesFileSuffix+" either way")
}

// startStream wires streaming into a single run's options when it writes a result.
func startStream(out, flag string, duration time.Duration, opts *bench.Options) (*streamer, error) {
	if out == "" {
		return nil, nil
	}
	every, err := checkpointEvery(flag, duration)
	if err != nil {
		return nil, err
	}
	s := newStreamer(out, every, opts.Logf)
	// A segment's result travels alone (qbench k8s collect fetches one file per pod): it embeds.
	s.keep = every > 0 && opts.Segment == nil
	opts.Stream = s
	return s, nil
}

// sweepStream streams each run of a sweep (bench.SweepOptions.Stream) to a file of its own, with
// checkpoints as --checkpoint says: a matrix cell run once to its cell's file (DIR/CELL.json),
// which the cell's result then replaces; a repetition to CELL.runN.json (FILE.runN.json for
// repeat: without a matrix), where its own result is written when it returns, and which
// removeRepetitions removes once the merged result is written. A sweep killed in a long run so
// leaves that run's seconds for qbench recover, and the repetitions already run, beside the
// results already written. Sweep results embed their series (they are merged), so a run's series
// file goes once the run returns a result.
func sweepStream(out string, matrix bool, every time.Duration, logf func(string, ...any)) func(bench.SweepProgress) (bench.SeriesSink, func(*results.Result)) {
	return func(p bench.SweepProgress) (bench.SeriesSink, func(*results.Result)) {
		path := out
		if matrix {
			path = filepath.Join(out, results.Slug(p.Name)+".json")
		}
		if p.Reps > 1 {
			path = repetitionPath(path, p.Rep)
		}
		s := newStreamer(path, every, logf)
		return s, func(res *results.Result) {
			if res == nil {
				s.finish(false) // the checkpoint and the series file stay, for qbench recover
				return
			}
			if p.Reps > 1 {
				if err := results.WriteFileAtomic(path, res); err != nil {
					logf("writing %s: %v", path, err)
					s.finish(false)
					return
				}
			}
			s.finish(true)
		}
	}
}

// repetitionPath is where repetition rep of the result at path streams.
func repetitionPath(path string, rep int) string {
	return fmt.Sprintf("%s.run%d.json", strings.TrimSuffix(path, ".json"), rep)
}

// removeRepetitions removes the repetition files of the result at path, once it is written.
func removeRepetitions(path string, reps int) {
	for rep := 1; rep <= reps; rep++ {
		os.Remove(repetitionPath(path, rep))
	}
}

// writeFinal ends streaming and writes the run's result over its last checkpoint, atomically. A
// checkpointed run's result references its series file (the runner no longer holds the
// per-second histograms, and a day's series rewritten into one JSON would take its size again
// in memory); any other embeds its series, and the series file is removed.
func (s *streamer) writeFinal(out string, res *results.Result) error {
	if s == nil {
		return results.WriteFileAtomic(out, res)
	}
	s.finish(false)
	if !s.keep || s.failed || s.w == nil { // s.w nil: no second was streamed
		if s.keep {
			s.logf("the series file is incomplete: the result embeds the series in memory, whose seconds before the failure lack their histograms")
		}
		err := results.WriteFileAtomic(out, res)
		if err == nil {
			os.Remove(s.side)
		}
		return err
	}
	ref := *res
	ref.Series, ref.SeriesFile = nil, filepath.Base(s.side)
	return results.WriteFileAtomic(out, &ref)
}

func recoverCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "recover RESULT.json",
		Short: "Make a readable result of a run that never finished, from its checkpoint and series file",
		Long: `recover reads what a killed or crashed run left at its -o path: the last checkpoint
(RESULT.json, when one was written) and the series file streamed as it went
(RESULT.json` + results.SeriesFileSuffix + `), and writes one self-contained result covering every second
the series file holds, its summary computed from them. The result is marked a recovered checkpoint
(flag "checkpoint", a PARTIAL headline): what only the run's end knows (delivered, queued, lost,
duplicates) is not known. report, plot, export and compare read a checkpoint and its series file
directly too; recover makes one file of them.

Exit codes: 0 ok; 1 the result could not be written; 2 nothing to recover (no such file, a
finished result, a damaged series file).`,
		Example: `  qbench recover result.json                 # rewrite result.json in place
  qbench recover result.json -o recovered.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := recoverResult(args[0])
			if err != nil {
				return usageError{err}
			}
			if err := results.WriteSummary(cmd.OutOrStdout(), r); err != nil {
				return err
			}
			dst := out
			if dst == "" {
				dst = strings.TrimSuffix(args[0], results.SeriesFileSuffix)
			}
			if err := results.WriteFileAtomic(dst, r); err != nil {
				return fmt.Errorf("writing %s: %w", dst, err)
			}
			fmt.Fprintf(os.Stderr, "qbench: wrote %s\n", dst)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the recovered result here (default: over RESULT.json)")
	return cmd
}

// recoverResult reads a checkpoint (with its series file), or the series file alone when the run
// was killed before its first checkpoint (RESULT.json is then missing, or an earlier run's
// finished result: the series file's run ID says which), and returns a self-contained recovered
// result.
func recoverResult(path string) (*results.Result, error) {
	path = strings.TrimSuffix(path, results.SeriesFileSuffix)
	var r *results.Result
	if _, err := os.Stat(path); err == nil {
		if r, err = results.ReadFile(path); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if r == nil || r.Checkpoint == nil {
		side := results.SeriesFileFor(path)
		sf, err := results.ReadSeriesFile(side)
		switch {
		case errors.Is(err, os.ErrNotExist) && r == nil:
			return nil, fmt.Errorf("%s: no such result, and no series file %s", path, side)
		case errors.Is(err, os.ErrNotExist) || err == nil && r != nil && sf.Header.RunID == r.RunID:
			return nil, fmt.Errorf("%s: a finished result, not a checkpoint: nothing to recover", path)
		case err != nil:
			return nil, err
		}
		r = sf.Header
		r.Series = sf.Series
		if r.Checkpoint == nil {
			r.Checkpoint = &results.Checkpoint{}
		}
		r.Checkpoint.TornLines = sf.TornLines
		if err := results.SummariseSeries(r); err != nil {
			return nil, fmt.Errorf("%s: %w", side, err)
		}
	}
	r.Checkpoint.Recovered = true
	r.SeriesFile = "" // embedded from here on
	return r, nil
}
