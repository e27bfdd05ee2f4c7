package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// checkList verifies the chunk structure against want: per-chunk counts add up, no chunk is
// empty, offsets are in their block, and the elements read back in order.
func checkList(t *testing.T, l *List, want [][]byte) {
	t.Helper()
	if l.Len() != len(want) {
		t.Fatalf("Len %d, want %d", l.Len(), len(want))
	}
	if l.c == nil {
		if len(want) != 0 {
			t.Fatalf("no chunks for %d elements", len(want))
		}
		return
	}
	i := 0
	for ci := 0; ci < l.c.k; ci++ {
		ch := l.c.at(ci)
		if ch.n <= 0 || ch.lo < 0 || ch.lo > ch.hi || ch.hi > ch.size {
			t.Fatalf("chunk %d: n %d lo %d hi %d size %d", ci, ch.n, ch.lo, ch.hi, ch.size)
		}
		k := 0
		for off := int(ch.lo); off < int(ch.hi); k++ {
			var e []byte
			e, off = elemAt(ch.buf(), off)
			if i >= len(want) || !bytes.Equal(e, want[i]) {
				t.Fatalf("chunk %d element %d (list %d) = %.20q, want %.20q", ci, k, i, e, at(want, i))
			}
			i++
		}
		if k != int(ch.n) {
			t.Fatalf("chunk %d holds %d elements, n says %d", ci, k, ch.n)
		}
	}
	if i != len(want) {
		t.Fatalf("%d elements in the chunks, want %d", i, len(want))
	}
}

func at(s [][]byte, i int) []byte {
	if i < len(s) {
		return s[i]
	}
	return nil
}

// removeModel is LREM on a slice.
func removeModel(m [][]byte, v []byte, count int) ([][]byte, int) {
	keep := make([]bool, len(m))
	want, removed := count, 0
	if want < 0 {
		want = -want
	}
	for j := range m {
		i := j
		if count < 0 {
			i = len(m) - 1 - j
		}
		keep[i] = true
		if (want == 0 || removed < want) && bytes.Equal(m[i], v) {
			keep[i] = false
			removed++
		}
	}
	var out [][]byte
	for i, e := range m {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out, removed
}

func TestListRemove(t *testing.T) {
	// els builds n elements named by f; size pads them (3000 bytes: two a block, so the list
	// spans several chunks).
	els := func(n, size int, f func(i int) string) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			b := []byte(f(i))
			for len(b) < size {
				b = append(b, '.')
			}
			out[i] = b
		}
		return out
	}
	name := func(s string) func(int) string { return func(int) string { return s } }
	abc := func(i int) string { return string(rune('a' + i%3)) }
	idx := func(i int) string { return fmt.Sprint(i) }
	cases := []struct {
		name  string
		els   [][]byte
		v     string
		count int
	}{
		{"head", els(10, 0, idx), "0", 1},
		{"tail", els(10, 0, idx), "9", -1},
		{"middle fwd", els(10, 0, idx), "5", 1},
		{"middle back", els(10, 0, idx), "5", -1},
		{"no match", els(10, 0, idx), "x", 0},
		{"no match back", els(10, 0, idx), "x", -3},
		{"all of one", els(30, 0, abc), "b", 0},
		{"first two", els(30, 0, abc), "b", 2},
		{"last two", els(30, 0, abc), "b", -2},
		{"count past matches", els(30, 0, abc), "c", 100},
		{"count past matches back", els(30, 0, abc), "c", -100},
		{"empty the list", els(50, 0, name("z")), "z", 0},
		{"empty the list back", els(50, 0, name("z")), "z", -50},
		{"single", els(1, 0, name("z")), "z", 1},
		{"empty element", els(5, 0, name("")), "", 2},
		{"across chunks all", els(40, 3000, abc), "a", 0},
		{"across chunks fwd 5", els(40, 3000, abc), "a", 5},
		{"across chunks back 5", els(40, 3000, abc), "a", -5},
		{"across chunks empty", els(40, 3000, name("q")), "q", 0},
		{"many small chunks", els(5000, 0, abc), "c", 0},
		{"many small fwd", els(5000, 0, abc), "c", 1000},
		{"many small back", els(5000, 0, abc), "a", -1000},
		{"big elements", els(6, 9000, abc), "a", 0},
	}
	for _, tc := range cases {
		for _, left := range []bool{false, true} { // built by RPUSH or by LPUSH (reversed)
			t.Run(fmt.Sprintf("%s/lpush=%v", tc.name, left), func(t *testing.T) {
				var l List
				model := tc.els
				for i := range model {
					if left {
						l.PushLeft(model[len(model)-1-i])
					} else {
						l.PushRight(model[i])
					}
				}
				checkList(t, &l, model)
				v := els(1, len(tc.els[0]), name(tc.v))[0] // padded like the elements
				want, wantN := removeModel(model, v, tc.count)
				if got := l.Remove(v, tc.count); got != wantN {
					t.Fatalf("Remove = %d, want %d", got, wantN)
				}
				checkList(t, &l, want)
				l.PushLeft([]byte("h")) // the list is still usable at both ends
				l.PushRight([]byte("t"))
				checkList(t, &l, append(append([][]byte{[]byte("h")}, want...), []byte("t")))
			})
		}
	}
}

// TestListRemoveRandom removes random values from random lists and checks the structure after
// each call, and that removals do not leave many near-empty blocks.
func TestListRemoveRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for round := 0; round < 200; round++ {
		var l List
		var model [][]byte
		size := []int{0, 10, 300, 3000}[rng.Intn(4)]
		for range rng.Intn(2000) {
			v := make([]byte, rng.Intn(size+1))
			v = append(v, byte('a'+rng.Intn(4)))
			model = pushEither(rng, &l, model, v)
		}
		for range 20 {
			if len(model) == 0 {
				break
			}
			v := model[rng.Intn(len(model))]
			count := rng.Intn(7) - 3
			var n int
			model, n = removeModel(model, v, count)
			if got := l.Remove(v, count); got != n {
				t.Fatalf("round %d: Remove(count %d) = %d, want %d", round, count, got, n)
			}
			checkList(t, &l, model)
		}
		if l.c != nil {
			used := 0
			for ci := 0; ci < l.c.k; ci++ {
				used += l.c.at(ci).used()
			}
			if l.c.k > 3*used/listBlock+2 { // adjacent chunks an edit touched hold > 3/4 block
				t.Fatalf("round %d: %d chunks for %d bytes", round, l.c.k, used)
			}
		}
	}
}

// TestListRemoveAllocs: removing one element allocates nothing.
func TestListRemoveAllocs(t *testing.T) {
	var l List
	v := []byte("message-payload-0123456789")
	for range 10000 {
		l.PushLeft(v)
	}
	l.PushRight([]byte("other"))
	allocs := testing.AllocsPerRun(1000, func() {
		l.PushRight(v)
		if l.Remove(v, -1) != 1 {
			t.Fatal("no match")
		}
		l.PushLeft(v)
		if l.Remove(v, 1) != 1 {
			t.Fatal("no match")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Remove pair, want 0", allocs)
	}
}

// TestListEditRandom runs random in-place edits (SetIndex, Insert, Trim, Remove) mixed with
// pushes and pops against a slice, checking the chunk structure after every step.
func TestListEditRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	elem := func() []byte {
		size := rng.Intn(60)
		switch rng.Intn(12) {
		case 0:
			size = listBlock + rng.Intn(100) // a chunk of its own
		case 1:
			size = 3000 + rng.Intn(2000) // two a block
		case 2:
			size = 126 + rng.Intn(4) // varint length boundary
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = byte('a' + rng.Intn(3))
		}
		return b
	}
	for round := 0; round < 40; round++ {
		var l List
		var model [][]byte
		for step := 0; step < 400; step++ {
			switch op := rng.Intn(12); {
			case op < 3 || len(model) == 0:
				model = pushEither(rng, &l, model, elem())
			case op < 6:
				i, v := rng.Intn(len(model)), elem()
				if rng.Intn(3) == 0 && len(model[i]) > 0 {
					v = append([]byte{}, model[i]...) // same size
					v[0] = 'z'
				}
				l.SetIndex(i, v)
				model[i] = v
			case op < 9:
				p := model[rng.Intn(len(model))]
				if rng.Intn(8) == 0 {
					p = []byte("no such pivot")
				}
				after, v := rng.Intn(2) == 0, elem()
				at := -1
				for i := range model {
					if bytes.Equal(model[i], p) {
						at = i
						break
					}
				}
				want := -1
				if at >= 0 {
					if after {
						at++
					}
					model = append(model[:at], append([][]byte{v}, model[at:]...)...)
					want = len(model)
				}
				if got := l.Insert(p, v, after); got != want {
					t.Fatalf("round %d step %d: Insert = %d, want %d", round, step, got, want)
				}
			case op == 9 && len(model) > 20:
				start, stop := rng.Intn(8)-2, -1-rng.Intn(8)
				if rng.Intn(10) == 0 {
					start, stop = 5, 2 // empties it
				}
				model = append([][]byte{}, rangeModel(model, start, stop)...)
				l.Trim(start, stop)
			case op == 10:
				v := model[rng.Intn(len(model))]
				count := rng.Intn(5) - 2
				var n int
				model, n = removeModel(model, v, count)
				if got := l.Remove(v, count); got != n {
					t.Fatalf("round %d step %d: Remove = %d, want %d", round, step, got, n)
				}
			default:
				if rng.Intn(2) == 0 {
					if got := l.PopLeft(); !bytes.Equal(got, model[0]) {
						t.Fatalf("round %d step %d: PopLeft", round, step)
					}
					model = model[1:]
				} else {
					if got := l.PopRight(); !bytes.Equal(got, model[len(model)-1]) {
						t.Fatalf("round %d step %d: PopRight", round, step)
					}
					model = model[:len(model)-1]
				}
			}
			checkList(t, &l, model)
		}
	}
}

// TestListEditAllocs: LSET (same or smaller size) and LINSERT into a chunk with room allocate
// nothing, on a list of 10,000.
func TestListEditAllocs(t *testing.T) {
	var l List
	v := []byte("message-payload-0123456789")
	for range 10000 {
		l.PushRight(v)
	}
	pivot := []byte("pivot")
	l.SetIndex(5000, pivot)
	allocs := testing.AllocsPerRun(100, func() {
		l.SetIndex(7000, []byte("message-payload-9876543210"))
		l.SetIndex(3000, []byte("short"))
		l.SetIndex(3000, v)
		if l.Insert(pivot, []byte("x"), true) < 0 {
			t.Fatal("no pivot")
		}
		l.Trim(0, -2)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per LSET/LINSERT/LTRIM round, want 0", allocs)
	}
}

// pushEither pushes v on a side of l chosen by rng, and on the same side of model.
func pushEither(rng *rand.Rand, l *List, model [][]byte, v []byte) [][]byte {
	if rng.Intn(2) == 0 {
		l.PushLeft(v)
		return append([][]byte{v}, model...)
	}
	l.PushRight(v)
	return append(model, v)
}
