package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"qbench/results"
)

// A run killed with kill -9 leaves a checkpoint and its series file, and every reader (report,
// plot, export, compare, recover) reads them as a PARTIAL checkpoint covering the seconds up to
// the kill, not only up to the last checkpoint.
func TestCheckpointKilledRunIsReadable(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	sc := writeFile(t, "s.yaml", "name: soak\nengine: embedded\ndesign: stream\nproducers: 2\nconsumers: 2\nrate: 1000\nduration: 20s\nwarmup: 1s\n")
	cmd, stderr, done := startQbench(t, "run", "-q", sc, "-o", out, "--checkpoint", "2s")
	// Kill once the series file holds six seconds (header + 6 lines) and a checkpoint exists.
	side := results.SeriesFileFor(out)
	deadline := time.Now().Add(12 * time.Second)
	for {
		data, _ := os.ReadFile(side)
		_, statErr := os.Stat(out)
		if bytes.Count(data, []byte("\n")) >= 7 && statErr == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("qbench exited before the kill: %v; stderr: %s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no six seconds streamed within 12 s; stderr: %s", stderr.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: nothing of qbench's runs after it
		t.Fatal(err)
	}
	<-done

	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint == nil || res.SeriesFile == "" {
		t.Fatalf("checkpoint %+v, series file %q: want a checkpoint referencing its series file", res.Checkpoint, res.SeriesFile)
	}
	if n := len(res.Series); n < 6 || n > 9 {
		t.Errorf("%d seconds read back, want about 6 (the series file's, up to the kill)", n)
	}
	if c := res.Checkpoint.CoveredSeconds; c < 5.5 || c > 9.5 {
		t.Errorf("covered %.1f s, want about 6", c)
	}
	if res.Summary.Latency["produce"].Count == 0 || res.Summary.Ledger.Acked == 0 {
		t.Errorf("summary not computed from the series: %+v", res.Summary.Ledger)
	}
	if !strings.Contains(strings.Join(results.Assess(res).Codes(), ","), results.CodeCheckpoint) {
		t.Errorf("trust codes %v lack %s", results.Assess(res).Codes(), results.CodeCheckpoint)
	}

	cases := []struct {
		name string
		args []string
		want string // in stdout or the file written
		file string
	}{
		{"report", []string{"report", out, "-o", filepath.Join(dir, "rep.html")}, "CHECKPOINT", "rep.html"},
		{"plot", []string{"plot", out, "-o", filepath.Join(dir, "plots"), "--format", "svg"}, "", ""},
		{"export", []string{"export", out, "-o", filepath.Join(dir, "exp")}, "checkpoint", "exp/summary.csv"},
		{"compare", []string{"compare", out, out}, "checkpoint of a run not finished", ""},
		{"recover", []string{"recover", out, "-o", filepath.Join(dir, "rec.json")}, "PARTIAL: RECOVERED", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, errOut, code := qbench(t, c.args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr: %s", code, errOut)
			}
			got := stdout
			if c.file != "" {
				data, err := os.ReadFile(filepath.Join(dir, c.file))
				if err != nil {
					t.Fatal(err)
				}
				got = string(data)
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("%s output lacks %q:\n%.2000s", c.name, c.want, got)
			}
		})
	}
	rec, err := results.ReadFile(filepath.Join(dir, "rec.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Checkpoint == nil || !rec.Checkpoint.Recovered || rec.SeriesFile != "" || len(rec.Series) != len(res.Series) {
		t.Errorf("recovered: checkpoint %+v, series file %q, %d seconds (want recovered, embedded, %d)", rec.Checkpoint, rec.SeriesFile, len(rec.Series), len(res.Series))
	}
}

// A run that finishes replaces its checkpoint with its result. A checkpointed run's result
// references its series file (the runner dropped each second from memory once streamed, and read
// the file back for its end-of-run figures), and reading it brings the histograms back; a run without checkpoints embeds its series and removes the file.
func TestCheckpointFinishedRun(t *testing.T) {
	sc := writeFile(t, "s.yaml", "name: short\nengine: embedded\ndesign: stream\nproducers: 1\nconsumers: 1\nrate: 500\nduration: 2s\nwarmup: 0s\n")
	for _, c := range []struct {
		checkpoint string
		references bool
	}{{"1s", true}, {"off", false}} {
		t.Run(c.checkpoint, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "r.json")
			if _, errOut, code := qbench(t, "run", "-q", sc, "-o", out, "--checkpoint", c.checkpoint); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(raw), `"series_file"`); got != c.references {
				t.Errorf("result references its series file: %v, want %v", got, c.references)
			}
			_, statErr := os.Stat(results.SeriesFileFor(out))
			if kept := statErr == nil; kept != c.references {
				t.Errorf("series file kept: %v, want %v", kept, c.references)
			}
			res, err := results.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if res.Checkpoint != nil || len(res.Series) < 2 {
				t.Fatalf("checkpoint %+v, %d seconds: want a finished result with its series", res.Checkpoint, len(res.Series))
			}
			// The end-of-run figures read the series: a checkpointed run's, back from the file.
			if res.Summary.DeliverBytesRate < 500*100 {
				t.Errorf("deliver bytes rate %.0f B/s: the series the end-of-run figures read is missing", res.Summary.DeliverBytesRate)
			}
			var hists int
			for _, iv := range res.Series {
				if iv.Histograms["produce"] != "" {
					hists++
				}
			}
			if hists == 0 {
				t.Errorf("no second has its produce histogram")
			}
			if _, errOut, code := qbench(t, "export", out, "-o", filepath.Join(dir, "exp")); code != 0 {
				t.Errorf("export: exit %d: %s", code, errOut)
			}
			hlog, _ := os.ReadFile(filepath.Join(dir, "exp", "r.produce.hlog"))
			if !bytes.Contains(hlog, []byte("HISTF")) {
				t.Errorf("r.produce.hlog holds no interval histogram:\n%.500s", hlog)
			}
		})
	}
}

func TestCheckpointEvery(t *testing.T) {
	cases := []struct {
		flag string
		dur  time.Duration
		want time.Duration
		bad  bool
	}{
		{"", 5 * time.Minute, 0, false},
		{"", time.Hour, autoCheckpointEvery, false},
		{"off", time.Hour, 0, false},
		{"5m", time.Minute, 5 * time.Minute, false},
		{"soon", time.Hour, 0, true},
	}
	for _, c := range cases {
		t.Run(c.flag+"/"+c.dur.String(), func(t *testing.T) {
			got, err := checkpointEvery(c.flag, c.dur)
			if (err != nil) != c.bad || got != c.want {
				t.Errorf("checkpointEvery(%q, %s) = %s, %v; want %s, error %v", c.flag, c.dur, got, err, c.want, c.bad)
			}
		})
	}
}

// recover finds what a killed run left: its checkpoint, or its series file alone (killed before
// the first checkpoint, over nothing or over an earlier run's finished result), and refuses a
// finished result or nothing at all.
func TestCheckpointRecoverSources(t *testing.T) {
	header := func(id string) *results.Result {
		return &results.Result{SchemaVersion: results.SchemaVersion, RunID: id, Checkpoint: &results.Checkpoint{DurationSeconds: 3600}}
	}
	writeSide := func(t *testing.T, out, id string) {
		w, err := results.CreateSeriesFile(results.SeriesFileFor(out), header(id))
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < 3; i++ {
			if err := w.Append(results.Interval{StartNs: i * int64(time.Second), Acked: 10}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	finished := func(t *testing.T, out, id string) {
		if err := results.WriteFileAtomic(out, &results.Result{SchemaVersion: results.SchemaVersion, RunID: id}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		prepare func(t *testing.T, out string)
		err     string
	}{
		{"series file alone", func(t *testing.T, out string) { writeSide(t, out, "new") }, ""},
		{"over an earlier result", func(t *testing.T, out string) { finished(t, out, "old"); writeSide(t, out, "new") }, ""},
		{"finished", func(t *testing.T, out string) { finished(t, out, "new") }, "a finished result"},
		{"finished with its series file", func(t *testing.T, out string) { finished(t, out, "new"); writeSide(t, out, "new") }, "a finished result"},
		{"nothing", func(t *testing.T, out string) {}, "no such result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			c.prepare(t, out)
			r, err := recoverResult(out)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.RunID != "new" || len(r.Series) != 3 || !r.Checkpoint.Recovered || r.Summary.Ledger.Acked != 30 || r.Checkpoint.CoveredSeconds != 3 {
				t.Errorf("run %s, %d seconds, checkpoint %+v, acked %d: want run new, 3 seconds, recovered, 30", r.RunID, len(r.Series), r.Checkpoint, r.Summary.Ledger.Acked)
			}
		})
	}
}

// A sweep streams each run to a file of its own: killed (SIGKILL) in its second cell's second
// repetition, it leaves the first cell's result in the index, the second cell's first
// repetition whole, and the run under way as a checkpoint that qbench recover reads; a sweep
// that finishes leaves no repetition or series files.
func TestCheckpointKilledSweep(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	long := writeFile(t, "long.yaml", "name: sweep\nengine: embedded\ndesign: stream\nproducers: 1\nconsumers: 1\nrate: 300\nwarmup: 0s\nrepeat: 2\nmatrix:\n  duration: [1s, 30s]\n")
	cmd, stderr, done := startQbench(t, "run", "-q", long, "-o", out, "--checkpoint", "1s")
	// Kill once the second cell's second repetition has streamed three seconds.
	var ckpt string
	deadline := time.Now().Add(60 * time.Second)
	for {
		matches, _ := filepath.Glob(filepath.Join(out, "*30s*.run2.json"))
		if len(matches) == 1 {
			data, _ := os.ReadFile(results.SeriesFileFor(matches[0]))
			if bytes.Count(data, []byte("\n")) >= 4 {
				ckpt = matches[0]
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("qbench exited before the kill: %v; stderr: %s", err, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the second cell's second repetition streamed nothing within 60 s; files: %v; stderr: %s", lsDir(out), stderr.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done

	ix, err := results.ReadIndexFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatalf("index: %v (files %v)", err, lsDir(out))
	}
	if len(ix.Cells) != 1 {
		t.Fatalf("index lists %d cells, want the 1 finished", len(ix.Cells))
	}
	first, err := results.ReadFile(filepath.Join(out, ix.Cells[0].File))
	if err != nil || first.Checkpoint != nil {
		t.Fatalf("first cell: %v, checkpoint %+v: want its merged result", err, first.Checkpoint)
	}
	rep1 := strings.Replace(ckpt, ".run2.json", ".run1.json", 1)
	if r, err := results.ReadFile(rep1); err != nil || r.Checkpoint != nil || r.Summary.Ledger.Acked == 0 {
		t.Errorf("the killed cell's finished repetition %s: %v; want its whole result", filepath.Base(rep1), err)
	}
	if _, errOut, code := qbench(t, "recover", ckpt, "-o", filepath.Join(dir, "rec.json")); code != 0 {
		t.Fatalf("recover %s: exit %d: %s", filepath.Base(ckpt), code, errOut)
	}
	rec, err := results.ReadFile(filepath.Join(dir, "rec.json"))
	if err != nil || rec.Checkpoint == nil || len(rec.Series) < 3 {
		t.Fatalf("recovered: %v; want a checkpoint with the seconds streamed (got %d)", err, len(rec.Series))
	}

	// A sweep that finishes leaves only its results and index.
	sc := writeFile(t, "m.yaml", "name: sweep\nengine: embedded\ndesign: stream\nproducers: 1\nconsumers: 1\nduration: 1s\nwarmup: 0s\nrepeat: 2\nmatrix:\n  rate: [300, 400]\n")
	out2 := filepath.Join(dir, "whole")
	if _, errOut, code := qbench(t, "run", "-q", sc, "-o", out2, "--checkpoint", "1s"); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	for _, f := range lsDir(out2) {
		if strings.Contains(f, ".run") || strings.HasSuffix(f, results.SeriesFileSuffix) {
			t.Errorf("a finished sweep left %s", f)
		}
	}
}

func lsDir(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
