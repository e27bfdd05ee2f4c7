package bench

import (
	"encoding/json"
	"fmt"

	"qbench/bench/ledger"
	"qbench/results"
)

// CostSegmentFaults charges a segmented run's fault windows over the union of its segments'
// ledger books (results.FaultJoin): spans are every segment's windows on the run's shared
// timeline, sorted by start, and the books carry each message's intended time and each failed
// send's answer time on that timeline (ledger.BookTimes). Loss and duplicates are charged by
// ledger.Attribute, failed sends by ledger.ChargeFailed: the rules of a run of one process, over
// every segment's messages. ok is false when the books carry no times (no segment had a window
// when it wrote its book).
func CostSegmentFaults(raws []json.RawMessage, spans []results.ChargeSpan) ([]results.FaultCost, bool, error) {
	books := make([]ledger.Book, len(raws))
	for i, raw := range raws {
		if len(raw) == 0 {
			return nil, false, fmt.Errorf("segment %d has no ledger book", i)
		}
		if err := json.Unmarshal(raw, &books[i]); err != nil {
			return nil, false, fmt.Errorf("segment %d's ledger book: %w", i, err)
		}
	}
	l, err := ledger.Union(books)
	if err != nil {
		return nil, false, err
	}
	if !l.Timed() {
		return nil, false, nil
	}
	windows := make([]ledger.Window, len(spans))
	for i, s := range spans {
		windows[i] = ledger.Window{StartNs: s.StartNs, EndNs: s.EndNs, Destructive: s.Destructive}
	}
	attributed := l.Attribute(windows)
	failed := l.ChargeFailed(windows)
	out := make([]results.FaultCost, len(spans))
	for i, a := range attributed {
		out[i] = results.FaultCost{Lost: a.Lost, Duplicates: a.Duplicates, ProduceErrors: failed[i],
			OldestLostNs: a.OldestLostNs, LastDurableNs: a.LastDurableNs}
	}
	return out, true, nil
}
