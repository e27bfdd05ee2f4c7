package ledger

import (
	"math/rand/v2"
	"testing"
)

// A dupSet answers as a map would, through merges, in key order.
func TestDupSetMatchesAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	want := map[uint64]redelivered{}
	s := newDupSet()
	for i := range 20_000 {
		k := uint64(i*3) + uint64(rng.IntN(5000)) // mostly rising, some behind
		if rng.IntN(10) == 0 && len(want) > 0 {
			k = uint64(rng.IntN(i*3 + 1)) // an old key again
		}
		r, ok := s.get(k)
		if w, wok := want[k]; ok != wok || r != w {
			t.Fatalf("get(%d) = %+v %v, want %+v %v", k, r, ok, w, wok)
		}
		if !ok {
			r.intended = int64(k)*1000 - rng.Int64N(1e6)
		}
		r.extra++
		s.set(k, r, !ok)
		want[k] = r
	}
	if s.len() != len(want) {
		t.Fatalf("len %d, want %d", s.len(), len(want))
	}
	var last uint64
	n := 0
	s.each(func(k uint64, r redelivered) {
		if n > 0 && k <= last {
			t.Fatalf("each: key %d after %d", k, last)
		}
		if want[k] != r {
			t.Fatalf("each: %d is %+v, want %+v", k, r, want[k])
		}
		last = k
		n++
	})
	if n != len(want) {
		t.Fatalf("each gave %d entries, want %d", n, len(want))
	}
}
