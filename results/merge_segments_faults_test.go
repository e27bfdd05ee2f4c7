package results

import (
	"encoding/json"
	"slices"
	"testing"
)

// Each segment holds only the windows it fired: the merge lists every segment's windows once, on
// the first segment's timeline, in order of their start, each naming its segment, and charges
// each the costs the join computed over every segment's books from the spans on the shared
// timeline. Without a join (or books without times), the windows keep their own segment's
// produce errors and duplicates, and their loss is named not known.
func TestMergeSegmentsFaultWindows(t *testing.T) {
	mk := func() []*Result {
		s0, s1 := segmentFixture(0, 2), segmentFixture(1, 2)
		s0.Segment.ShiftNs, s1.Segment.ShiftNs = 3e6, 5e6 // segment 1 began 2 ms after segment 0
		s0.Faults = []FaultWindow{{Kind: "stall", Target: "server", StartNs: 1e9, EndNs: 1.5e9, ProduceErrors: 4, Duplicates: 1, LastDurableNs: -1}}
		s0.Segment.Windows = []ChargeSpan{{StartNs: 1e9, EndNs: 1.5e9}}
		s1.Faults = []FaultWindow{{Kind: "consumer-pause", Target: "consumer 1", StartNs: 0.5e9, EndNs: 0.7e9, ProduceErrors: 2, LastDurableNs: -1}}
		s1.Segment.Windows = []ChargeSpan{{StartNs: 0.5e9, EndNs: 0.7e9}}
		s1.Summary.NotKnown = []string{"lost", "faults.lost"}
		return []*Result{s0, s1}
	}
	join := func([]json.RawMessage) (Ledger, []MessageID, error) { return Ledger{Lost: 9}, nil, nil }
	var got []ChargeSpan
	cost := func(_ []json.RawMessage, spans []ChargeSpan) ([]FaultCost, bool, error) {
		got = spans
		return []FaultCost{{ProduceErrors: 7, OldestLostNs: -1, LastDurableNs: -1}, {Lost: 9, Duplicates: 3, ProduceErrors: 11, OldestLostNs: 1.0e9, LastDurableNs: 0.9e9}}, true, nil
	}
	m, err := MergeSegmentsCosted(mk(), join, cost)
	if err != nil {
		t.Fatal(err)
	}
	wantSpans := []ChargeSpan{{StartNs: 0.505e9, EndNs: 0.705e9}, {StartNs: 1.003e9, EndNs: 1.503e9}}
	if !slices.Equal(got, wantSpans) {
		t.Errorf("spans charged %+v, want both segments' windows on the shared timeline, by start: %+v", got, wantSpans)
	}
	if len(m.Faults) != 2 {
		t.Fatalf("merged %d windows, want each segment's one", len(m.Faults))
	}
	pause, stall := m.Faults[0], m.Faults[1]
	if pause.Kind != "consumer-pause" || pause.Segment == nil || *pause.Segment != 1 || pause.StartNs != 0.502e9 || pause.EndNs != 0.702e9 {
		t.Errorf("pause row %+v: want segment 1's window on segment 0's timeline (2 ms later)", pause)
	}
	if stall.Kind != "stall" || stall.Segment == nil || *stall.Segment != 0 || stall.StartNs != 1e9 {
		t.Errorf("stall row %+v", stall)
	}
	if pause.ProduceErrors != 7 || pause.Lost != 0 || stall.ProduceErrors != 11 || stall.Lost != 9 || stall.Duplicates != 3 ||
		stall.LossWindowNs != 0.003e9 || stall.LastDurableNs != 0.897e9 {
		t.Errorf("costs: pause %+v, stall %+v: want the join's, the loss window and last durable point on the first timeline", pause, stall)
	}
	if slices.Contains(m.Summary.NotKnown, "faults.lost") || m.Summary.Ledger.Lost != 9 {
		t.Errorf("not known %v, ledger %+v: the windows' loss is known", m.Summary.NotKnown, m.Summary.Ledger)
	}

	m, err = MergeSegments(mk(), join)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Faults) != 2 || m.Faults[0].ProduceErrors != 2 || m.Faults[1].ProduceErrors != 4 || m.Faults[1].Duplicates != 1 || m.Faults[1].Lost != 0 ||
		!slices.Contains(m.Summary.NotKnown, "faults.lost") {
		t.Errorf("uncosted: %+v, not known %v: want each segment's own costs, the loss not known", m.Faults, m.Summary.NotKnown)
	}
}
