package ledger

import (
	"testing"
	"unsafe"
)

// A reserved book takes a whole schedule without reallocating its arrays (no copy under the lock,
// no garbage), and counts exactly what an unreserved one does; past the reservation it still grows.
func TestReserveHoldsTheScheduleAndCountsTheSame(t *testing.T) {
	const n = 4800 // 300 batches of 16
	reserved, grown := NewGroups(2, 2), NewGroups(2, 2)
	reserved.Reserve(0, n)
	reserved.Reserve(0, 10) // smaller: keeps what it has
	b := reserved.producers[0]
	if len(b.flags) != n+1 || len(b.intended) != n+1 || len(b.after) != n+1 || len(b.deliveries[1]) != n+1 {
		t.Fatalf("reserved %d, %d, %d, %d entries, want %d", len(b.flags), len(b.intended), len(b.after), len(b.deliveries[1]), n+1)
	}
	first := unsafe.SliceData(b.intended)
	errs := make([]error, 16)
	intended := make([]int64, 16)
	for _, l := range []*Ledger{reserved, grown} {
		for seq := uint64(0); seq+16 <= n+160; seq += 16 {
			l.Batch(0, seq, 16)
			l.SentBatch(0, seq, errs, intended, seq+16)
			for i := uint64(0); i < 16; i++ {
				if (seq+i)%7 != 0 { // every seventh never delivered: lost
					l.DeliveredTo(int((seq+i)%2), 0, seq+i)
					l.DeliveredTo(int((seq+i+1)%2), 0, seq+i)
				}
			}
			if l == reserved && seq+16 == n && unsafe.SliceData(b.intended) != first {
				t.Fatal("the reserved book reallocated its arrays within the reservation")
			}
		}
	}
	if len(b.flags) < n+160 {
		t.Fatalf("past the reservation the book did not grow: %d entries", len(b.flags))
	}
	got, _ := reserved.Close(0)
	want, _ := grown.Close(0)
	if got != want {
		t.Fatalf("reserved totals\n %+v\nunreserved\n %+v", got, want)
	}
	if got.Lost == 0 || got.Delivered == 0 {
		t.Fatalf("the test should see losses and deliveries: %+v", got)
	}
}
