package results

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestE2EBoundAddsTheTwoLargest(t *testing.T) {
	for _, tc := range []struct {
		bounds []int64
		want   int64
	}{
		{[]int64{5}, 0}, // one segment: one clock
		{[]int64{5, 7}, 12},
		{[]int64{3, 9, 4, 8}, 17},
		{[]int64{3, -1, 4}, -1}, // a segment's offset unknown: so is the bound
	} {
		if got := e2eBound(tc.bounds); got != tc.want {
			t.Errorf("e2eBound(%v) = %d, want %d", tc.bounds, got, tc.want)
		}
	}
}

func segmentFixture(i, n int) *Result {
	return &Result{SchemaVersion: SchemaVersion, RunID: "r", Scenario: json.RawMessage(`{"rate":1}`), Engine: Engine{Name: "redis-url", Design: "stream"},
		Histograms: map[string]string{}, Segment: &Segment{Index: i, Count: n, StartAt: time.Unix(100, 0), Ledger: json.RawMessage(`{}`)}}
}

// Segments given in any order are joined in index order, and the join's ledger is the result's.
func TestMergeSegmentsOrdersAndJoins(t *testing.T) {
	var order []int
	m, err := MergeSegments([]*Result{segmentFixture(2, 3), segmentFixture(0, 3), segmentFixture(1, 3)}, func(books []json.RawMessage) (Ledger, []MessageID, error) {
		for i := range books {
			order = append(order, i)
		}
		return Ledger{Sent: 42}, nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.Ledger.Sent != 42 || len(m.Segments) != 3 || m.Segments[0].Index != 0 || m.Segments[2].Index != 2 || m.Segments[1].Ledger != nil {
		t.Errorf("merged: ledger %+v, segments %+v", m.Summary.Ledger, m.Segments)
	}
	if !strings.Contains(strings.Join(m.Merged.Sources, ","), "r segment 1/3") {
		t.Errorf("sources %v", m.Merged.Sources)
	}
	_, err = MergeSegments([]*Result{segmentFixture(0, 2), segmentFixture(1, 2)}, func([]json.RawMessage) (Ledger, []MessageID, error) {
		return Ledger{}, nil, errors.New("no book ran producer 3")
	})
	if !errors.Is(err, ErrSegments) {
		t.Errorf("a join that fails: %v, want ErrSegments", err)
	}
}

func TestCheckSegmentsRefuses(t *testing.T) {
	other := func(f func(r *Result)) *Result { r := segmentFixture(1, 2); f(r); return r }
	for _, tc := range []struct {
		name string
		rs   []*Result
		want string
	}{
		{"missing", []*Result{segmentFixture(0, 3), segmentFixture(2, 3)}, "missing 1"},
		{"repeated", []*Result{segmentFixture(0, 2), segmentFixture(0, 2), segmentFixture(1, 2)}, "more than once"},
		{"another start", []*Result{segmentFixture(0, 2), other(func(r *Result) { r.Segment.StartAt = time.Unix(200, 0) })}, "started at"},
		{"another engine", []*Result{segmentFixture(0, 2), other(func(r *Result) { r.Engine.Name = "kafka-url" })}, "ran kafka-url"},
		{"another seed", []*Result{segmentFixture(0, 2), other(func(r *Result) { r.Scenario = json.RawMessage(`{"rate":1,"seed":2}`) })}, "different scenario"},
		{"not a segment", []*Result{segmentFixture(0, 2), other(func(r *Result) { r.Segment = nil })}, "not a segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckSegments(tc.rs)
			if !errors.Is(err, ErrSegments) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckSegments: %v, want ErrSegments and %q", err, tc.want)
			}
		})
	}
}
