package results

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A segment's summary cannot know lost, queued or duplicates (a message it sent may be delivered
// in another segment): it says "known after merge" instead of printing zeros; the merge, whose
// joined ledger knows them, no longer names them as unknown.
func TestSegmentSummarySaysKnownAfterMerge(t *testing.T) {
	seg := segmentFixture(0, 2)
	seg.Summary.Ledger = Ledger{Sent: 5000, Acked: 5000, Delivered: 5051}
	seg.Summary.NotKnown = append([]string(nil), SegmentNotKnown...)
	var buf bytes.Buffer
	if err := WriteSummary(&buf, seg); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.Contains(text, "queued, lost and duplicates known after merge") {
		t.Errorf("segment summary without \"known after merge\":\n%s", text)
	}
	for _, zero := range []string{"lost 0", "queued 0", "duplicates 0"} {
		if strings.Contains(text, zero) {
			t.Errorf("segment summary prints %q, which only the merge can know:\n%s", zero, text)
		}
	}
	other := segmentFixture(1, 2)
	other.Summary.NotKnown = append([]string(nil), SegmentNotKnown...)
	m, err := MergeSegments([]*Result{seg, other}, func([]json.RawMessage) (Ledger, []MessageID, error) {
		return Ledger{Sent: 10000, Acked: 10000, Delivered: 10000}, nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range SegmentNotKnown {
		if contains(m.Summary.NotKnown, f) {
			t.Errorf("merged result still names %s not known: %v", f, m.Summary.NotKnown)
		}
	}
	buf.Reset()
	if err := WriteSummary(&buf, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "queued 0, lost 0, duplicates 0") || strings.Contains(buf.String(), "known after merge") {
		t.Errorf("merged summary:\n%s", buf.String())
	}
}

// A merge with a source stopped early says so in its headline, with how many were sent of about
// how many scheduled, and its rates are over the longest window rather than each source's summed
// as if every one had run the whole time; a complete merge has no such line.
func TestInterruptedMergeHeadlineIsPartial(t *testing.T) {
	mk := func(i int, interrupted bool, sent int64, secs float64) *Result {
		r := segmentFixture(i, 2)
		r.Scenario = json.RawMessage(`{"rate":2000,"duration":"6s"}`) // as scenarios writes it
		r.Interrupted = interrupted
		r.Summary.OfferedRate = 1000
		r.Summary.MeasuredSeconds = secs
		r.Summary.ProduceRate = float64(sent) / secs
		r.Summary.DeliverRate = float64(sent) / secs
		return r
	}
	join := func(books []json.RawMessage) (Ledger, []MessageID, error) {
		return Ledger{Sent: 9004, Acked: 9004, Delivered: 9004}, nil, nil
	}
	m, err := MergeSegments([]*Result{mk(0, false, 6000, 6), mk(1, true, 3004, 3.004)}, join)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, m); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	want := "PARTIAL: 9,004 of about 12,000 scheduled sent; interrupted (r segment 1/2 stopped early)"
	if !strings.HasPrefix(lines[1], want) {
		t.Errorf("headline %q, want it to start %q\n%s", lines[1], want, buf.String())
	}
	if strings.Contains(buf.String(), "produced 2000 msg/s") {
		t.Errorf("a partial merge reads as the full rate:\n%s", buf.String())
	}
	// 9,004 deliveries over the longest window, 6 s.
	if got := m.Summary.DeliverRate; got < 1500 || got > 1502 {
		t.Errorf("merged deliver rate %.1f, want about 1501 (9,004 over 6 s)", got)
	}
	complete, err := MergeSegments([]*Result{mk(0, false, 6000, 6), mk(1, false, 6000, 6)}, join)
	if err != nil {
		t.Fatal(err)
	}
	if h := PartialHeadline(complete); h != "" {
		t.Errorf("a complete merge's headline: %q", h)
	}
	// Repetitions each ran the whole schedule: two of 6 s at 1,000 msg/s held about 12,000.
	reps := &Result{Scenario: json.RawMessage(`{"duration":6000000000}`), Interrupted: true,
		Merged: &Merged{Mode: MergeRepetitions, Sources: []string{"a", "b"}, Interrupted: []string{"b"}}}
	reps.Summary.OfferedRate, reps.Summary.Ledger.Sent = 1000, 9000
	if h, want := PartialHeadline(reps), "PARTIAL: 9,000 of about 12,000 scheduled sent; interrupted (b stopped early)"; !strings.HasPrefix(h, want) {
		t.Errorf("repetitions' headline %q, want %q", h, want)
	}
}

// An engine inside qbench's process: the summary's memory reading and the engine cost line say
// they include qbench, and the CSV's in_process_engine column is true. An engine qbench started
// as a server has its cost per message printed, summed across a crash's restart and saying so;
// one whose process changed unseen reads n/a (restarted).
func TestSummaryLabelsEngineCost(t *testing.T) {
	base := func() *Result {
		r := segmentFixture(0, 1)
		r.Segment = nil
		r.Summary.Ledger = Ledger{Sent: 1000, Acked: 1000, Delivered: 1000}
		r.Series = []Interval{{Health: &EngineHealth{Counters: map[string]int64{"used_memory": 70 << 20}}}}
		return r
	}
	for _, tc := range []struct {
		name        string
		inProcess   bool
		stats       map[string]int64
		want, avoid []string
	}{
		{"in process", true, map[string]int64{"engine_fsyncs": 1000, "engine_log_bytes": 435_000},
			[]string{"used_memory max 70.00 MiB (includes qbench", "engine cost: in qbench's process (includes qbench)", "log bytes 435 B"}, nil},
		{"server", false, map[string]int64{"proc_cpu_ns": 5e8, "proc_write_bytes": 150_000_000, "engine_log_bytes": 435_000, "engine_fsyncs": 250},
			[]string{"engine cost per message: CPU 500us, log bytes 435 B, device writes 146.5 KiB, fsyncs 0.250"}, []string{"includes qbench", "restart"}},
		{"restarted", false, map[string]int64{"proc_cpu_ns": 5e8, "proc_write_bytes": 1000, "engine_log_bytes": 435_000, "proc_restarts": 1},
			[]string{"summed across 1 restart(s)"}, nil},
		{"unknown", false, map[string]int64{"proc_rss_bytes": 1, "proc_cost_unknown": 1},
			[]string{"engine cost: n/a (restarted)"}, []string{"engine cost per message"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			r.Summary.Generator.InProcessEngine = tc.inProcess
			r.Engine.Stats = tc.stats
			var buf bytes.Buffer
			if err := WriteSummary(&buf, r); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("summary without %q:\n%s", w, buf.String())
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(buf.String(), a) {
					t.Errorf("summary with %q:\n%s", a, buf.String())
				}
			}
			buf.Reset()
			if err := WriteSummaryCSV(&buf, []string{"x"}, []*Result{r}); err != nil {
				t.Fatal(err)
			}
			rows := strings.Split(strings.TrimSpace(buf.String()), "\n")
			head, row := strings.Split(rows[0], ","), strings.Split(rows[1], ",")
			col := slices.Index(head, "in_process_engine")
			if col < 0 || row[col] != map[bool]string{true: "true", false: "false"}[tc.inProcess] {
				t.Errorf("CSV in_process_engine column %d in %q: row %q", col, head, row)
			}
		})
	}
}

// Merged engine cost: counters add (fsyncs and log bytes included), memory is the largest, and a
// counter some results lack is left out and said unknown rather than summed over fewer runs.
func TestMergeStatsSumsEngineCost(t *testing.T) {
	a := &Result{Engine: Engine{Stats: map[string]int64{"proc_cpu_ns": 10, "proc_rss_bytes": 5, "engine_fsyncs": 3, "engine_log_bytes": 100, "proc_restarts": 1}}}
	b := &Result{Engine: Engine{Stats: map[string]int64{"proc_cpu_ns": 20, "proc_rss_bytes": 7, "engine_fsyncs": 4, "engine_log_bytes": 50}}}
	got := mergeStats([]*Result{a, b})
	for k, v := range map[string]int64{"proc_cpu_ns": 30, "proc_rss_bytes": 7, "engine_fsyncs": 7, "engine_log_bytes": 150, "proc_restarts": 1} {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (%v)", k, got[k], v, got)
		}
	}
	if _, ok := got["proc_cost_unknown"]; ok {
		t.Errorf("cost unknown with every result measured: %v", got)
	}
	c := &Result{Engine: Engine{Stats: map[string]int64{"proc_rss_bytes": 9, "proc_cost_unknown": 1}}}
	got = mergeStats([]*Result{a, c})
	if _, ok := got["proc_cpu_ns"]; ok || got["proc_cost_unknown"] != 1 {
		t.Errorf("a result without CPU summed over the other alone: %v", got)
	}
}
