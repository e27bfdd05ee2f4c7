package ledger

import (
	"encoding/json"
	"errors"
	"testing"
)

// Two segments' books, with their times, joined: each window is charged the loss, duplicates and
// failed sends of both segments, on the shared timeline (segment b's times shifted by its
// ShiftNs), by the rules of one process: a loss or duplicate by its intended time, a failed send
// among the windows begun when its answer came, a failure before any window to none.
func TestUnionChargesWindowsOverEverySegment(t *testing.T) {
	a, b := NewGroups(2, 1), NewGroups(2, 1)
	a.SetRemote(1)
	b.SetRemote(0)
	fail := errors.New("NOREPLICAS")
	// Producer 0 in segment a (shift 0): 0 failed before any window, 1 acked, 2 failed during
	// window 0, 3 acked.
	a.SentBatch(0, 0, []error{fail, nil, fail, nil}, []int64{100, 200, 300, 400}, 4)
	a.FailedAt(0, 0, []error{fail}, 140)
	a.FailedAt(0, 2, []error{fail}, 450)
	// Producer 1 in segment b (shift 1000): 0 acked and never delivered (lost), 1 failed during
	// window 1, 2 delivered twice, once in each segment.
	b.SentBatch(1, 0, []error{nil, fail, nil}, []int64{100, 200, 300}, 3)
	b.FailedAt(1, 1, []error{fail}, 260)
	a.DeliveredTo(0, 0, 1)
	a.DeliveredTo(0, 0, 3)
	a.DeliveredTo(0, 1, 2)
	b.DeliveredTo(0, 1, 2)
	books := make([]Book, 2)
	for i, seg := range []struct {
		l     *Ledger
		p     int
		shift int64
	}{{a, 0, 0}, {b, 1, 1000}} {
		bk, err := seg.l.BookTimes(func(p int) bool { return p == seg.p }, seg.shift)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(bk) // as a result file carries it
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &books[i]); err != nil {
			t.Fatal(err)
		}
	}
	u, err := Union(books)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Timed() {
		t.Fatal("the union has no intended times")
	}
	windows := []Window{{StartNs: 150, EndNs: 350}, {StartNs: 1000, EndNs: 1400, Destructive: true}}
	costs := u.Attribute(windows)
	failed := u.ChargeFailed(windows)
	want := []WindowTotals{{OldestLostNs: -1, LastDurableNs: -1}, {Lost: 1, Duplicates: 1, OldestLostNs: 1100, LastDurableNs: 400}}
	for i := range windows {
		if costs[i] != want[i] {
			t.Errorf("window %d: %+v, want %+v", i, costs[i], want[i])
		}
	}
	if failed[0] != 1 || failed[1] != 1 {
		t.Errorf("failed sends charged %v, want [1 1]: segment a's in window 0, segment b's (shifted) in window 1, none from before any window", failed)
	}
	// Books without times (no window in their run) cannot be charged by.
	plain, err := a.Book(func(p int) bool { return p == 0 })
	if err != nil {
		t.Fatal(err)
	}
	other, _ := b.Book(func(p int) bool { return p == 1 })
	if u, err := Union([]Book{plain, other}); err != nil || u.Timed() {
		t.Errorf("a union of books without times: timed %v, %v", u != nil && u.Timed(), err)
	}
	// Nor can a union in which one sending book lacks them.
	if u, err := Union([]Book{books[0], other}); err != nil || u.Timed() {
		t.Errorf("a union with one book without times: timed %v, %v", u != nil && u.Timed(), err)
	}
}
