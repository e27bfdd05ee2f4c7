package store

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestChunkedAgainstSortedSlice drives a chunked set and a plain sorted slice with the same
// random inserts, removals and lookups (in order, out of order, from the front, at random)
// and requires the same contents throughout.
func TestChunkedAgainstSortedSlice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		ordered bool    // IDs inserted ascending (XREADGROUP's case)
		front   float64 // share of removals that take the oldest entry (XACK in order)
	}{
		{"ordered, acked in order", 5000, true, 1},
		{"ordered, acked at random", 5000, true, 0},
		{"random inserts", 5000, false, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var s chunked[ID]
			var ref []ID
			next := uint64(1)
			for step := 0; step < 4*tc.n; step++ {
				if r.IntN(3) != 0 || len(ref) == 0 {
					id := ID{next, 0}
					next++
					if !tc.ordered {
						id = ID{r.Uint64N(uint64(tc.n) * 4), 0}
					}
					i, found := slices.BinarySearchFunc(ref, id, ID.Compare)
					if found {
						continue
					}
					ref = slices.Insert(ref, i, id)
					if p := s.insert(id); *p != id {
						t.Fatalf("insert returned %v, want %v", *p, id)
					}
				} else {
					i := 0
					if r.Float64() >= tc.front {
						i = r.IntN(len(ref))
					}
					if !s.remove(ref[i]) {
						t.Fatalf("remove %v: not found", ref[i])
					}
					ref = slices.Delete(ref, i, i+1)
					if s.remove(ID{0, 1}) {
						t.Fatal("removed an absent ID")
					}
				}
				if step%97 == 0 {
					var got []ID
					s.ascend(ID{}, MaxID, func(id *ID) bool { got = append(got, *id); return true })
					if !slices.Equal(got, ref) || s.n != len(ref) {
						t.Fatalf("step %d: %d entries, want %d", step, len(got), len(ref))
					}
					for _, id := range ref {
						if p := s.get(id); p == nil || *p != id {
							t.Fatalf("get %v failed", id)
						}
					}
					if f, ok := s.first(); len(ref) > 0 && (!ok || f != ref[0]) {
						t.Fatalf("first %v, want %v", f, ref[0])
					}
					if l, ok := s.last(); len(ref) > 0 && (!ok || l != ref[len(ref)-1]) {
						t.Fatalf("last %v, want %v", l, ref[len(ref)-1])
					}
				}
			}
		})
	}
}

// TestChunkedEmptiedReusesChunk: a PEL that each acknowledgement empties (a consumer group at
// light load: add, then remove, message after message) allocates no chunk per message, and
// stays correct.
func TestChunkedEmptiedReusesChunk(t *testing.T) {
	var p PEL
	next := uint64(1)
	cycle := func() {
		id := ID{next, 0}
		next++
		p.Add(Nack{ID: id})
		if p.Len() != 1 || p.Get(id) == nil {
			t.Fatalf("after Add(%v): Len %d, Get %v", id, p.Len(), p.Get(id))
		}
		if !p.Remove(id) || p.Len() != 0 {
			t.Fatalf("Remove(%v) failed or Len %d", id, p.Len())
		}
		if _, ok := p.First(); ok {
			t.Fatal("an empty PEL has a first entry")
		}
	}
	cycle()
	if a := testing.AllocsPerRun(1000, cycle); a != 0 {
		t.Errorf("%v allocations per add and remove of an emptied PEL, want 0", a)
	}
}
