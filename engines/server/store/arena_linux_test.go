//go:build linux

package store

import (
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// residentBytes is how much of b (page-aligned) is in memory, by mincore, which faults
// nothing in.
func residentBytes(t *testing.T, b []byte) int {
	t.Helper()
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		if v&1 != 0 {
			n += page
		}
	}
	return n
}

// TestArenaPrefault checks both halves of what prefault is for: every block handed out is
// already resident (the event loop's first store into it takes no page fault), and no more
// than populateStep beyond the write position is (an unused end of a slab or chunk does not
// count toward RSS).
func TestArenaPrefault(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size, keep int // bytes reserved per allocation, and kept after shrinking it
		total      int // bytes allocated in all
	}{
		{"list blocks", listBlock, listBlock, 2*listSlab + 5*listBlock},
		{"stream tail nodes", 8 << 10, 4700, 3 * maxChunk},
		{"small stream nodes", 100, 40, maxChunk / 2},
		{"largest arena object", maxArenaObj, maxArenaObj, 3 * maxChunk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "list blocks" {
				checkListPool(t, tc.total)
				return
			}
			a := newStreamArena()
			defer a.freeAll()
			for used := 0; used < tc.total; used += tc.keep {
				b, c := a.alloc(tc.size)
				if c == nil {
					t.Fatalf("a %d-byte block came from the heap", tc.size)
				}
				a.shrink(c, b, tc.keep)
				checkResident(t, c.mem, c.off-tc.keep, c.off, c.off-tc.keep+tc.size)
			}
		})
	}
}

func checkListPool(t *testing.T, total int) {
	p := &blockPool{}
	var slabs [][]byte
	defer func() {
		for _, s := range slabs {
			arenaMapped.Add(-int64(len(s)))
			unmapChunk(s)
		}
	}()
	for used := 0; used < total; used += listBlock {
		b := p.get()
		if b == nil {
			t.Fatal("no block")
		}
		if p.slab.off == listBlock {
			slabs = append(slabs, unsafe.Slice(unsafe.SliceData(b), listSlab))
		}
		checkResident(t, p.slab.mem, p.slab.off-listBlock, p.slab.off, p.slab.off)
	}
	if len(slabs) < 2 {
		t.Fatalf("%d slabs used, want the test to cross into a second", len(slabs))
	}
}

// checkResident fails unless mem[from:to] is wholly resident and mem holds at most
// populateStep resident beyond reach, the furthest end ever reserved (a stream's tail block
// is reserved whole, then shrunk).
func checkResident(t *testing.T, mem []byte, from, to, reach int) {
	t.Helper()
	page := os.Getpagesize()
	lo := from / page * page
	if got, want := residentBytes(t, mem[lo:to]), (to+page-1)/page*page-lo; got < want {
		t.Fatalf("block [%d,%d) of a %d-byte chunk: %d of %d bytes resident, want all", from, to, len(mem), got, want)
	}
	if populateBroken.Load() {
		return // an old kernel: chunks are faulted in whole when mapped
	}
	if got, limit := residentBytes(t, mem), reach+populateStep; got > limit {
		t.Fatalf("reserved up to %d of a %d-byte chunk, %d bytes resident: want at most %d", reach, len(mem), got, limit)
	}
}
