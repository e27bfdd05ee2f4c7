package bench

import (
	"encoding/json"
	"fmt"

	"qbench/bench/ledger"
	"qbench/results"
)

// JoinPartialSegmentLedgers joins the books of the segments that finished when others are
// missing (results.PartialLedgerJoin): the missing segments' messages count as unknown, never as
// lost (ledger.UnionPartial).
func JoinPartialSegmentLedgers(raws []json.RawMessage, missingProducers []int, consumersMissing bool) (results.PartialLedger, error) {
	books := make([]ledger.Book, len(raws))
	for i, raw := range raws {
		if len(raw) == 0 {
			return results.PartialLedger{}, fmt.Errorf("segment %d has no ledger book", i)
		}
		if err := json.Unmarshal(raw, &books[i]); err != nil {
			return results.PartialLedger{}, fmt.Errorf("segment %d's ledger book: %w", i, err)
		}
	}
	t, lost, err := ledger.UnionPartial(books, missingProducers, consumersMissing, 100)
	if err != nil {
		return results.PartialLedger{}, err
	}
	out := results.PartialLedger{Ledger: results.Ledger(t.Totals), Unresolved: t.Unresolved, OrphanDelivered: t.OrphanDelivered}
	for _, m := range lost {
		out.Lost = append(out.Lost, results.MessageID{Group: m.Group, Producer: m.Producer, Seq: m.Seq})
	}
	return out, nil
}
