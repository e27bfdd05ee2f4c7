package ledger

import "testing"

// A missing segment's messages are never lost: the missing producer's unseen messages count
// nowhere, its delivered ones apart, and a present producer's acknowledged message no present
// consumer received is lost only when no consumer is missing.
func TestUnionPartialCountsMissingAsUnknown(t *testing.T) {
	// Segment 0 ran producer 0 and the consumer; segment 1 (missing) ran producer 1.
	seg := New(2)
	seg.SetRemote(1)
	for seq := range uint64(10) {
		seg.Sent(0, seq, true)
	}
	for seq := range uint64(8) { // 0..7 received, 8 and 9 not
		seg.Delivered(0, seq)
	}
	for seq := range uint64(3) { // three of the missing producer's messages reached it
		seg.Delivered(1, seq)
	}
	bk, err := seg.Book(func(p int) bool { return p == 0 })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		consumersMissing bool
		lost, unresolved int64
	}{
		{"every consumer present", false, 2, 0},
		{"a consumer missing", true, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tot, lost, err := UnionPartial([]Book{bk}, []int{1}, tc.consumersMissing, 100)
			if err != nil {
				t.Fatal(err)
			}
			if tot.Sent != 10 || tot.Acked != 10 || tot.Delivered != 8 || tot.Phantom != 0 {
				t.Errorf("totals %+v: want 10 sent and acked, 8 delivered, no phantom", tot.Totals)
			}
			if tot.Lost != tc.lost || int64(len(lost)) != tc.lost || tot.Unresolved != tc.unresolved || tot.OrphanDelivered != 3 {
				t.Errorf("lost %d (%d listed), unresolved %d, orphans %d; want %d, %d, 3", tot.Lost, len(lost), tot.Unresolved, tot.OrphanDelivered, tc.lost, tc.unresolved)
			}
		})
	}
}
