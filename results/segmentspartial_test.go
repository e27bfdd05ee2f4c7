package results

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func partialFixture(i, n int, producers, consumers Span) *Result {
	r := segmentFixture(i, n)
	r.Scenario = json.RawMessage(`{"producers":4,"consumers":2,"duration":"10s"}`)
	r.Segment.Producers, r.Segment.Consumers = producers, consumers
	r.Summary.OfferedRate = 50 * float64(producers.Count) // 50 msg/s per producer
	return r
}

// A merge missing segments joins the others, names what is missing (indices, producers,
// consumers, the scheduled share) and the partial join's unknowns, and says PARTIAL on the
// headline and in the trust verdict; the same segments all present merge as MergeSegments does.
func TestMergeSegmentsPartialNamesWhatIsMissing(t *testing.T) {
	seg := func(i int) *Result {
		return partialFixture(i, 4, Span{First: i, Count: 1}, Span{First: i / 2, Count: i % 2})
	}
	join := func([]json.RawMessage) (Ledger, []MessageID, error) { return Ledger{Sent: 1}, nil, nil }
	var gotMissing []int
	var gotConsumersMissing bool
	partial := func(books []json.RawMessage, missing []int, consumersMissing bool) (PartialLedger, error) {
		gotMissing, gotConsumersMissing = missing, consumersMissing
		return PartialLedger{Ledger: Ledger{Sent: 2, Acked: 2}, Unresolved: 3, OrphanDelivered: 4}, nil
	}
	for _, tc := range []struct {
		name            string
		rs              []*Result
		missing         []int
		consumers       int
		headline, trust string
	}{
		{"all present", []*Result{seg(0), seg(1), seg(2), seg(3)}, nil, 0, "", ""},
		{"one producer's segment missing", []*Result{seg(0), seg(1), seg(3)}, []int{2}, 0, "PARTIAL: segment 2 of 4 missing: its share is unknown, not lost (1 of the producers, about 500 messages scheduled", "partial"},
		{"a consumer's segment missing", []*Result{seg(0), seg(2), seg(3)}, []int{1}, 1, "1 of the consumers missing: 3 acknowledged messages", "partial"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MergeSegmentsPartial(tc.rs, join, partial, nil)
			if err != nil {
				t.Fatal(err)
			}
			h := MissingHeadline(m)
			if tc.missing == nil {
				if m.Merged.Missing != nil || h != "" || m.Summary.Ledger.Sent != 1 {
					t.Errorf("complete merge: missing %+v, headline %q, ledger %+v", m.Merged.Missing, h, m.Summary.Ledger)
				}
				return
			}
			miss := m.Merged.Missing
			if miss == nil || !slices.Equal(miss.Segments, tc.missing) || miss.Producers != 1 || miss.Consumers != tc.consumers || miss.Unresolved != 3 || miss.OrphanDelivered != 4 {
				t.Fatalf("missing %+v", miss)
			}
			if !slices.Equal(gotMissing, tc.missing) || gotConsumersMissing != (tc.consumers > 0) {
				t.Errorf("join told producers %v missing, consumers missing %v", gotMissing, gotConsumersMissing)
			}
			if m.Summary.Ledger.Sent != 2 || m.Summary.Ledger.Lost != 0 {
				t.Errorf("ledger %+v: want the partial join's", m.Summary.Ledger)
			}
			if !strings.Contains(h, tc.headline) {
				t.Errorf("headline %q lacks %q", h, tc.headline)
			}
			var sb strings.Builder
			if err := WriteSummary(&sb, m); err != nil || !strings.Contains(sb.String(), "PARTIAL: segment") {
				t.Errorf("summary lacks the headline: %v\n%s", err, sb.String())
			}
			if a := Assess(m); a.Verdict != VerdictFlagged || !slices.ContainsFunc(a.Flags, func(f Flag) bool { return f.Code == CodePartial }) {
				t.Errorf("trust %+v: want flagged partial", a)
			}
		})
	}
	// Still refused: a result that is not a segment, segments of two runs.
	other := seg(2)
	other.RunID = "elsewhere"
	for _, rs := range [][]*Result{{seg(0), {SchemaVersion: SchemaVersion, RunID: "x"}}, {seg(0), other}} {
		if _, err := MergeSegmentsPartial(rs, join, partial, nil); !errors.Is(err, ErrSegments) {
			t.Errorf("MergeSegmentsPartial: %v, want ErrSegments", err)
		}
	}
}
