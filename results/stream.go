package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// A run writes its per-second series to a side file as it goes, so that a run killed in its
// fifth hour still leaves its first five hours on disk. The side file is line-oriented JSON:
// the first line is the run's header (a Result without series or summary figures), every
// further line one Interval. JSON lines rather than HdrHistogram interval logs (one per latency
// kind) because one file holds everything a second measured (counts, lag, engine health and the
// histograms of every kind) in the form every reader already decodes; qbench export still writes
// .hlog files from it. An append is one write of one whole line: a kill -9 leaves at most a
// torn last line, which the reader leaves out and counts.

// SeriesFileSuffix names a result's side file: RESULT.json's is RESULT.json.series.jsonl.
const SeriesFileSuffix = ".series.jsonl"

// SeriesFileFor is the side file of the result at path.
func SeriesFileFor(path string) string { return path + SeriesFileSuffix }

// SeriesSyncEvery is how often the side file is fsynced: a power cut loses at most these last
// seconds; a kill -9 of qbench alone loses nothing written (the writes are in the page cache).
const SeriesSyncEvery = 5 * time.Second

// SeriesWriter appends a run's intervals to its side file.
type SeriesWriter struct {
	f        *os.File
	buf      bytes.Buffer
	lastSync time.Time
	now      func() time.Time
	err      error // sticky: once the file cannot be written, nothing more is
}

// CreateSeriesFile creates (or truncates) the side file at path and writes the header line.
func CreateSeriesFile(path string, header *Result) (*SeriesWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &SeriesWriter{f: f, now: time.Now}
	w.lastSync = w.now()
	h := *header
	h.Series, h.SeriesFile = nil, ""
	if err := w.line(&h); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Append writes one interval as one line, and fsyncs when SeriesSyncEvery has passed.
func (w *SeriesWriter) Append(iv Interval) error {
	if err := w.line(iv); err != nil {
		return err
	}
	if now := w.now(); now.Sub(w.lastSync) >= SeriesSyncEvery {
		w.lastSync = now
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("%s: %w", w.f.Name(), err)
			return w.err
		}
	}
	return nil
}

func (w *SeriesWriter) line(v any) error {
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	if err := enc.Encode(v); err != nil { // Encode ends the line with '\n'
		var uv *json.UnsupportedValueError
		if !errors.As(err, &uv) {
			return err
		}
		return nil // a NaN in one second's figures must not stop the run's streaming
	}
	if _, err := w.f.Write(w.buf.Bytes()); err != nil {
		w.err = fmt.Errorf("%s: %w", w.f.Name(), err)
		return w.err
	}
	return nil
}

// Close fsyncs and closes the side file.
func (w *SeriesWriter) Close() error {
	serr := w.f.Sync()
	cerr := w.f.Close()
	if w.err != nil {
		return w.err
	}
	if serr != nil {
		return serr
	}
	return cerr
}

// SeriesFile is a side file read back: its header, its intervals, and how many torn lines
// (a last line cut by a kill) were left out.
type SeriesFile struct {
	Header    *Result
	Series    []Interval
	TornLines int
	slim      bool // ReadSeriesFileSlim
}

// ReadSeriesFile reads a side file. A line that does not decode is left out (and counted) only
// when it is the last: anything else is damage, an error naming the file and line.
func ReadSeriesFile(path string) (*SeriesFile, error) {
	return readSeriesFile(path, false)
}

// ReadSeriesFileSlim is ReadSeriesFile without each second's histograms and engine health: what
// a run that streamed its series reads back for the figures it computes at its end, in a tenth
// of the memory or less.
func ReadSeriesFileSlim(path string) (*SeriesFile, error) {
	return readSeriesFile(path, true)
}

func readSeriesFile(path string, slim bool) (*SeriesFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sf := &SeriesFile{slim: slim}
	return sf, sf.read(path, f)
}

func readSeries(name string, rd io.Reader) (*SeriesFile, error) {
	sf := &SeriesFile{}
	return sf, sf.read(name, rd)
}

func (out *SeriesFile) read(name string, rd io.Reader) error {
	br := bufio.NewReaderSize(rd, 1<<16)
	var bad error
	badLine := 0
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if bad != nil { // a bad line followed by more: not a torn tail
				return fmt.Errorf("%s:%d: %w", name, badLine, bad)
			}
			if derr := out.decode(n, line, err == io.EOF); derr != nil {
				bad, badLine = derr, n
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if bad != nil {
		if badLine == 1 {
			return fmt.Errorf("%s:1: not a qbench series file: %w", name, bad)
		}
		out.TornLines++
	}
	if out.Header == nil {
		return fmt.Errorf("%s: empty: no header line", name)
	}
	if out.Header.SchemaVersion != SchemaVersion {
		return fmt.Errorf("%s:1: result schema version %d, this qbench reads %d", name, out.Header.SchemaVersion, SchemaVersion)
	}
	return nil
}

func (s *SeriesFile) decode(n int, line []byte, last bool) error {
	if last && line[len(line)-1] != '\n' {
		return errors.New("torn line (no end of line)")
	}
	if n == 1 {
		var h Result
		if err := json.Unmarshal(line, &h); err != nil {
			return err
		}
		s.Header = &h
		return nil
	}
	var iv Interval
	if err := json.Unmarshal(line, &iv); err != nil {
		return err
	}
	if s.slim {
		iv.Histograms, iv.WarmupHistograms, iv.Health = nil, nil, nil
	}
	s.Series = append(s.Series, iv)
	return nil
}

// resolveSeries loads the series of a result that references its side file (SeriesFile, relative
// to the result's directory). A checkpoint's side file usually holds more seconds than the
// checkpoint's summary saw (the run went on after it, and maybe was killed): the summary is then
// computed again from all of them.
func resolveSeries(path string, r *Result) error {
	if r.SeriesFile == "" || len(r.Series) > 0 {
		return nil
	}
	side := r.SeriesFile
	if !filepath.IsAbs(side) {
		side = filepath.Join(filepath.Dir(path), side)
	}
	sf, err := ReadSeriesFile(side)
	if err != nil {
		return fmt.Errorf("%s: its series file: %w", path, err)
	}
	r.Series = sf.Series
	if r.Checkpoint != nil {
		r.Checkpoint.TornLines = sf.TornLines
		return SummariseSeries(r)
	}
	return nil
}

// WriteFileAtomic writes r to path through a temporary file in the same directory, fsynced and
// renamed over path: a reader (or a kill) sees the old file or the new one, never half of one.
func WriteFileAtomic(path string, r *Result) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp's 0600; os.Create's mode, as before
		return fail(err)
	}
	if err := Write(f, r); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself; not every file system can
		d.Close()
	}
	return nil
}
