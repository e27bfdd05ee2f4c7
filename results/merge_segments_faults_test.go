package results

import (
	"encoding/json"
	"slices"
	"testing"
)

// Segments see the same faults: their windows merge once, aligned, each segment's own produce
// errors and duplicates added; the loss no segment can know is not summed from the segments'
// partial ledgers but read 0 and named not known.
func TestMergeSegmentsFaultWindows(t *testing.T) {
	var segs []*Result
	for i := range 2 {
		r := segmentFixture(i, 2)
		r.Faults = []FaultWindow{{Kind: "consumer-crash", Target: "consumer 0", StartNs: 1e9, EndNs: 1e9,
			Lost: 40, Duplicates: int64(i + 1), ProduceErrors: 3, LossWindowNs: 5, LastDurableNs: 7, RecoverWriteNs: 1, RecoverReadNs: 2}}
		segs = append(segs, r)
	}
	m, err := MergeSegments(segs, func([]json.RawMessage) (Ledger, []MessageID, error) { return Ledger{Lost: 9}, nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Faults) != 1 {
		t.Fatalf("merged %d windows, want the one fault once", len(m.Faults))
	}
	f := m.Faults[0]
	if f.Duplicates != 3 || f.ProduceErrors != 6 || f.Lost != 0 || f.LastDurableNs != -1 || !slices.Contains(m.Summary.NotKnown, "faults.lost") {
		t.Errorf("merged window %+v, not known %v: want duplicates 3, produce errors 6, lost 0 and named not known", f, m.Summary.NotKnown)
	}
}
