package ledger

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// A message produced in one segment and consumed in another is matched in the union: the
// segments' own ledgers see it as sent-never-delivered and delivered-never-sent, the union as
// delivered once.
func TestUnionMatchesMessagesAcrossSegments(t *testing.T) {
	a, b := NewGroups(2, 1), NewGroups(2, 1)
	a.SetRemote(1)
	b.SetRemote(0)
	a.SentBatch(0, 0, []error{nil, nil, nil, nil, errors.New("x")}, make([]int64, 5), 5) // p0: 0-3 acked, 4 failed
	b.SentBatch(1, 0, []error{nil, nil, nil}, make([]int64, 3), 3)                       // p1: 0-2 acked
	a.DeliveredTo(0, 1, 0)
	a.DeliveredTo(0, 0, 0)
	b.DeliveredTo(0, 0, 1)
	b.DeliveredTo(0, 0, 2)
	b.DeliveredTo(0, 0, 0) // the second delivery of p0/0, in the other segment: a duplicate
	b.DeliveredTo(0, 1, 1)
	a.Found(0, 1, 2) // a's sweep found p1/2 held although a never sent it
	u := union(t, a, b)
	got, lost := u.Close(10)
	want := Totals{Sent: 8, Acked: 7, Failed: 1, Delivered: 5, Deliveries: 6, Queued: 1, Lost: 1, Duplicates: 1, DuplicatedMessages: 1}
	if got != want {
		t.Errorf("union totals\n got %+v\nwant %+v", got, want)
	}
	if len(lost) != 1 || lost[0] != (LostMessage{Producer: 0, Seq: 3}) {
		t.Errorf("lost = %v, want p0/3", lost)
	}
}

// Whatever the marks, the union of the segments' books gives the totals one ledger given every
// mark gives (reordering aside: it is judged per segment).
func TestUnionEqualsOneLedger(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		const producers, groups, segs = 5, 2, 3
		whole := NewGroups(producers, groups)
		parts := make([]*Ledger, segs)
		for i := range parts {
			parts[i] = NewGroups(producers, groups)
			for p := range producers {
				if p%segs != i {
					parts[i].SetRemote(p)
				}
			}
		}
		for p := range producers {
			n := rng.IntN(3000)
			errs := make([]error, n)
			for i := range errs {
				if rng.IntN(50) == 0 {
					errs[i] = errors.New("failed")
				}
			}
			whole.SentBatch(p, 0, errs, make([]int64, n), uint64(n))
			parts[p%segs].SentBatch(p, 0, errs, make([]int64, n), uint64(n))
			for range n + n/10 {
				seq, g, seg := uint64(rng.IntN(n+5)), rng.IntN(groups), rng.IntN(segs)
				switch rng.IntN(4) {
				case 0:
					whole.Found(g, p, seq)
					parts[seg].Found(g, p, seq)
				default:
					whole.DeliveredTo(g, p, seq)
					parts[seg].DeliveredTo(g, p, seq)
				}
			}
		}
		want, wantLost := whole.Close(50)
		got, gotLost := union(t, parts...).Close(50)
		want.Reordered, got.Reordered = 0, 0
		if got != want {
			t.Fatalf("seed %d: union\n got %+v\nwant %+v", seed, got, want)
		}
		if len(gotLost) != len(wantLost) {
			t.Fatalf("seed %d: %d lost listed, want %d", seed, len(gotLost), len(wantLost))
		}
	}
}

func TestUnionRefusesBooksThatDoNotFit(t *testing.T) {
	mk := func(producers int, local ...int) Book {
		l := NewGroups(producers, 1)
		for _, p := range local {
			l.Sent(p, 0, true)
		}
		bk, err := l.Book(func(p int) bool {
			for _, q := range local {
				if p == q {
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		return bk
	}
	for _, tc := range []struct {
		name  string
		books []Book
		want  string
	}{
		{"producer in two books", []Book{mk(2, 0, 1), mk(2, 1)}, "more than one book"},
		{"producer in none", []Book{mk(3, 0), mk(3, 1)}, "no book ran producer 2"},
		{"different producer counts", []Book{mk(2, 0), mk(3, 1, 2)}, "producers"},
		{"none", nil, "no ledger books"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Union(tc.books)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Union: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// union books each ledger (its own producers being those it did not mark remote), through JSON
// as a result file carries them, and joins them.
func union(t *testing.T, ls ...*Ledger) *Ledger {
	t.Helper()
	var books []Book
	for _, l := range ls {
		bk, err := l.Book(func(p int) bool { return !l.producers[p].remote })
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(bk)
		if err != nil {
			t.Fatal(err)
		}
		var back Book
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		books = append(books, back)
	}
	u, err := Union(books)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
