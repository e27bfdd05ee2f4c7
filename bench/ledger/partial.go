package ledger

import "fmt"

// PartialTotals are a partial union's totals: the run's ledger over the segments that finished,
// and what the missing segments took with them.
type PartialTotals struct {
	Totals
	// Unresolved counts acknowledged messages of the segments present that no present book
	// delivered and no sweep found, while a missing segment ran consumers: the missing book may
	// hold their delivery, so they are not known lost (summed over groups).
	Unresolved int64
	// OrphanDelivered counts distinct messages of the missing segments' producers that a present
	// segment's consumers received (summed over groups): delivered, their sending record lost with
	// the segment; not in Delivered.
	OrphanDelivered int64
}

// UnionPartial joins the books of the segments that finished, when others are missing:
// missingProducers are the producers only a missing book ran. Their messages were scheduled but
// whether they were sent is not known: those a present consumer received are counted apart
// (OrphanDelivered), the rest nowhere, never as lost. consumersMissing says a missing
// segment ran consumers: an acknowledged message no present book delivered is then Unresolved,
// not lost.
func UnionPartial(books []Book, missingProducers []int, consumersMissing bool, maxLost int) (PartialTotals, []LostMessage, error) {
	if len(books) == 0 {
		return PartialTotals{}, nil, fmt.Errorf("no ledger books to join")
	}
	// The missing producers get an empty record of sends, so Union accepts the books and still
	// joins every delivery of their messages.
	empty, err := pack(nil)
	if err != nil {
		return PartialTotals{}, nil, err
	}
	stand := Book{Groups: books[0].Groups, Producers: books[0].Producers, PoisonEvery: books[0].PoisonEvery}
	missing := map[int]bool{}
	for _, p := range missingProducers {
		missing[p] = true
		stand.Sent = append(stand.Sent, Marks{Producer: p, Data: empty})
	}
	l, err := Union(append(append([]Book(nil), books...), stand))
	if err != nil {
		return PartialTotals{}, nil, err
	}
	var t PartialTotals
	var lost []LostMessage
	for p, b := range l.producers {
		b.mu.Lock()
		for seq, f := range b.flags {
			if !missing[p] {
				if f&flagSent != 0 {
					t.Sent++
				}
				if f&flagAcked != 0 {
					t.Acked++
				}
				if f&flagFailed != 0 {
					t.Failed++
				}
			}
			for g := range b.deliveries {
				d := int64(b.deliveries[g][seq])
				found := b.isFound(g, seq)
				switch {
				case missing[p] && d == 0:
					// Scheduled in a missing segment, never seen: not known sent.
				case missing[p]:
					// Kept out of Delivered, so that delivered + queued + lost + unresolved
					// still add up to acknowledged.
					t.OrphanDelivered++
				case consumersMissing && f&flagAcked != 0 && d == 0 && !found:
					t.Unresolved++
				default:
					if account(&t.Totals, f, d, found, l.Poison(uint64(seq)), l.receiveOnly) && len(lost) < maxLost {
						lost = append(lost, LostMessage{Group: g, Producer: p, Seq: uint64(seq)})
					}
				}
			}
		}
		t.Reordered += b.reordered
		b.mu.Unlock()
	}
	t.Unknown = l.unknown.Load()
	t.Foreign = l.foreign.Load()
	return t, lost, nil
}
