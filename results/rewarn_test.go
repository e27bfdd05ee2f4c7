package results

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// capNote stands for a warning a run writes of itself (bench's message cap): no rule reads it
// again from the summary's figures.
const capNote = "rate: max stopped producing at its message cap, 1000 messages: the run is shorter than its duration"

// The rules' warnings are made anew from the summary; every other warning is kept once, in order;
// a segment's partial-result note is dropped.
func TestRewarn(t *testing.T) {
	busy := func(s *Summary) { s.Generator.CPUShare = 0.9 }
	seg := SegmentWarning(0, 2, "r")
	cases := []struct {
		name    string
		edit    func(*Summary)
		earlier [][]string
		want    []string
	}{
		{"nothing to say", func(*Summary) {}, nil, nil},
		{"a kept note survives a quiet summary", func(*Summary) {}, [][]string{{capNote}}, []string{capNote}},
		{"a stale rule warning is dropped", func(*Summary) {}, [][]string{{"consumers fell behind: 5 acknowledged messages were still queued at the end (not lost): end-to-end latency includes queueing"}}, nil},
		{"a rule warning made anew, the note after it", busy, [][]string{{capNote}}, []string{"qbench used 90%", capNote}},
		{"the same note from two runs, once", func(*Summary) {}, [][]string{{capNote}, {capNote, "another note"}}, []string{capNote, "another note"}},
		{"a segment's partial-result note is dropped", func(*Summary) {}, [][]string{{seg, capNote}}, []string{capNote}},
		{"every rule's prefix is recognised", func(*Summary) {}, [][]string{{
			"producers were late: x", "qbench used 99% x", "qbench (50%) and x", "producers reached their in-flight limit (8 batches) x", "consumers fell behind: x",
		}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := quietSummary()
			c.edit(&s)
			got := Rewarn(s, c.earlier...)
			if len(got) != len(c.want) {
				t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("warning %d is %q, want it to begin %q", i, got[i], w)
				}
			}
		})
	}
}

// Every rule's warning is recognised as a rule's, so a read-again summary never keeps it twice.
func TestRuleWarningsAreRecognised(t *testing.T) {
	s := quietSummary()
	s.Latency["send_delay"] = Latency{P99: 5_000_000}
	s.Generator.InFlightFull, s.Ledger.Queued = 1, 3
	all := Warnings(s)
	s.Generator.CPUShare, s.Generator.EngineCPUShare = 0.5, 0.4
	all = append(all, Warnings(s)...)
	s.Generator.CPUShare, s.Generator.InProcessEngine = 0.9, true
	all = append(all, Warnings(s)...)
	s.Generator.InProcessEngine = false
	all = append(all, Warnings(s)...)
	for _, w := range append(all, SegmentWarning(1, 3, "r")) {
		if !ruleWarning(w) {
			t.Errorf("not recognised as a rule's: %q", w)
		}
	}
	if ruleWarning(capNote) {
		t.Errorf("the cap's note taken for a rule's")
	}
}

// Merging repetitions keeps what a run wrote of itself (the message cap's warning).
func TestMergeKeepsRunsOwnWarnings(t *testing.T) {
	mk := func(id string, notes ...string) *Result {
		s := quietSummary()
		s.Warnings = notes
		return &Result{SchemaVersion: SchemaVersion, RunID: id, Scenario: []byte(`{"name":"x"}`), Summary: s, Histograms: map[string]string{}}
	}
	m, err := Merge([]*Result{mk("a", capNote), mk("b")}, MergeOptions{Mode: MergeRepetitions})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Summary.Warnings, []string{capNote}) {
		t.Fatalf("merged warnings %q, want the cap's note", m.Summary.Warnings)
	}
}

// Joining segments drops their partial-result notes and keeps the cap's.
func TestMergeSegmentsKeepsRunsOwnWarnings(t *testing.T) {
	var segs []*Result
	for i := range 2 {
		r := segmentFixture(i, 2)
		r.Summary.Warnings = []string{SegmentWarning(i, 2, "r"), capNote}
		segs = append(segs, r)
	}
	m, err := MergeSegments(segs, func([]json.RawMessage) (Ledger, []MessageID, error) { return Ledger{}, nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Summary.Warnings, []string{capNote}) {
		t.Fatalf("joined warnings %q, want only the cap's note", m.Summary.Warnings)
	}
}
