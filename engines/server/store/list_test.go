package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"
)

// TestListAgainstModel runs random operations on a List and on a plain slice and compares
// them after every step. Element sizes cross the chunk block size.
func TestListAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var l List
	var model [][]byte
	elem := func() []byte {
		size := rng.Intn(300)
		switch rng.Intn(20) {
		case 0:
			size = listBlock + rng.Intn(100) // bigger than a block
		case 1:
			size = 0
		case 2:
			size = 127 + rng.Intn(3) // varint length boundary
		}
		b := make([]byte, size)
		rng.Read(b)
		return b
	}
	for step := 0; step < 6000; step++ {
		op := rng.Intn(10)
		switch {
		case op < 3:
			v := elem()
			l.PushLeft(v)
			model = append([][]byte{bytes.Clone(v)}, model...)
		case op < 6:
			v := elem()
			l.PushRight(v)
			model = append(model, bytes.Clone(v))
		case op == 6 && len(model) > 0:
			if got := l.PopLeft(); !bytes.Equal(got, model[0]) {
				t.Fatalf("step %d PopLeft mismatch", step)
			}
			model = model[1:]
		case op == 7 && len(model) > 0:
			if got := l.PopRight(); !bytes.Equal(got, model[len(model)-1]) {
				t.Fatalf("step %d PopRight mismatch", step)
			}
			model = model[:len(model)-1]
		case op == 8 && len(model) > 0:
			i := rng.Intn(len(model))
			if got, ok := l.Index(i); !ok || !bytes.Equal(got, model[i]) {
				t.Fatalf("step %d Index(%d) mismatch", step, i)
			}
			if got, ok := l.Index(i - len(model)); !ok || !bytes.Equal(got, model[i]) {
				t.Fatalf("step %d Index(%d) mismatch", step, i-len(model))
			}
			if rng.Intn(50) == 0 {
				v := elem()
				l.SetIndex(i, v)
				model[i] = bytes.Clone(v)
			}
		case op == 9 && len(model) > 0:
			from := rng.Intn(len(model))
			rev := rng.Intn(2) == 0
			want := from
			l.Each(from, rev, func(i int, e []byte) bool {
				if i != want || !bytes.Equal(e, model[i]) {
					t.Fatalf("step %d Each(%d, %v) at %d (want %d)", step, from, rev, i, want)
				}
				if rev {
					want--
				} else {
					want++
				}
				return rng.Intn(30) != 0
			})
		}
		if l.Len() != len(model) {
			t.Fatalf("step %d: Len %d, model %d", step, l.Len(), len(model))
		}
		if step%500 == 0 {
			got := l.Elements()
			if len(got) != len(model) {
				t.Fatalf("step %d: %d elements, model %d", step, len(got), len(model))
			}
			for i := range got {
				if !bytes.Equal(got[i], model[i]) {
					t.Fatalf("step %d: element %d differs", step, i)
				}
			}
			start, stop := rng.Intn(len(model)+1)-len(model)/2, rng.Intn(len(model)+1)
			if fmt.Sprint(l.Range(start, stop)) != fmt.Sprint(rangeModel(model, start, stop)) {
				t.Fatalf("step %d: Range(%d, %d) differs", step, start, stop)
			}
		}
	}
}

func rangeModel(m [][]byte, start, stop int) [][]byte {
	s, e, ok := normRange(start, stop, len(m))
	if !ok {
		return [][]byte{}
	}
	return m[s : e+1]
}

// TestListBlocksReturned: a dropped list gives its blocks back to the pool.
func TestListBlocksReturned(t *testing.T) {
	l := &List{}
	v := make([]byte, 1000)
	for i := 0; i < 1000; i++ {
		l.PushRight(v)
	}
	listBlocks.mu.Lock()
	free := len(listBlocks.free)
	listBlocks.mu.Unlock()
	l = nil
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		listBlocks.mu.Lock()
		now := len(listBlocks.free)
		listBlocks.mu.Unlock()
		if now > free+100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("free blocks %d -> %d after dropping a list of ~125 blocks", free, now)
		}
		time.Sleep(time.Millisecond)
	}
}
