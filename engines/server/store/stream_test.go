package store

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

func fv(kv ...string) [][]byte {
	out := make([][]byte, len(kv))
	for i, s := range kv {
		out[i] = []byte(s)
	}
	return out
}

func collect(s *Stream, start, end ID, count int, rev bool) []string {
	var out []string
	s.Range(start, end, count, rev, func(id ID, f [][]byte) bool {
		e := id.String()
		for _, x := range f {
			e += " " + string(x)
		}
		out = append(out, e)
		return true
	})
	return out
}

func TestStreamAppendRange(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 250; i++ {
		f := fv("a", fmt.Sprint(i), "b", "x")
		if i%10 == 0 {
			f = fv("other", fmt.Sprint(i)) // different fields: stored with its own field names
		}
		s.Append(ID{uint64(i), uint64(i % 3)}, f)
	}
	if s.Len() != 250 || s.NumNodes() != 3 {
		t.Fatalf("len %d nodes %d, want 250 and 3", s.Len(), s.NumNodes())
	}
	tests := []struct {
		name       string
		start, end ID
		count      int
		rev        bool
		want       []string
	}{
		{"first two", ID{}, MaxID, 2, false, []string{"1-1 a 1 b x", "2-2 a 2 b x"}},
		{"other fields", ID{10, 0}, ID{10, 9}, 0, false, []string{"10-1 other 10"}},
		{"across a node boundary", ID{100, 0}, ID{101, 9}, 0, false, []string{"100-1 other 100", "101-2 a 101 b x"}},
		{"reverse", ID{}, MaxID, 2, true, []string{"250-1 other 250", "249-0 a 249 b x"}},
		{"reverse window", ID{99, 0}, ID{101, 0}, 0, true, []string{"100-1 other 100", "99-0 a 99 b x"}},
		{"empty window", ID{5, 0}, ID{5, 1}, 0, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := collect(s, tc.start, tc.end, tc.count, tc.rev)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStreamDeleteAndTrim(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 300; i++ {
		s.Append(ID{uint64(i), 0}, fv("f", "v"))
	}
	if !s.Delete(ID{1, 0}) || s.Delete(ID{1, 0}) {
		t.Fatal("Delete of 1-0 should succeed once")
	}
	if s.FirstID != (ID{2, 0}) || s.MaxDeletedID != (ID{1, 0}) {
		t.Fatalf("first %v maxdel %v", s.FirstID, s.MaxDeletedID)
	}
	// Approximate: only whole nodes (the first holds 99 live entries now).
	if n := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 150, Approx: true}); n != 99 {
		t.Fatalf("approx trim removed %d, want 99", n)
	}
	if n := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 150}); n != 50 {
		t.Fatalf("exact trim removed %d, want 50", n)
	}
	if s.Len() != 150 || s.FirstID != (ID{151, 0}) {
		t.Fatalf("len %d first %v", s.Len(), s.FirstID)
	}
	if n := s.Trim(TrimArgs{Strategy: TrimMinID, MinID: ID{250, 0}}); n != 99 {
		t.Fatalf("minid trim removed %d, want 99", n)
	}
}

func TestPEL(t *testing.T) {
	p := NewPEL()
	for i := 1; i <= 200; i++ {
		p.Add(Nack{ID: ID{uint64(i), 0}})
	}
	for i := 1; i <= 150; i++ {
		p.Remove(ID{uint64(i), 0})
	}
	p.Add(Nack{ID: ID{5, 0}}) // out of order re-add
	first, _ := p.First()
	last, _ := p.Last()
	if p.Len() != 51 || first != (ID{5, 0}) || last != (ID{200, 0}) {
		t.Fatalf("len %d first %v last %v", p.Len(), first, last)
	}
	var seen int
	p.Ascend(ID{150, 0}, ID{160, 0}, func(*Nack) bool { seen++; return true })
	if seen != 10 {
		t.Fatalf("ascend saw %d, want 10", seen)
	}
}

// TestArenaReleased checks that trimmed nodes give their chunks back, and that a dropped
// stream's chunks are unmapped once it is collected.
func TestArenaReleased(t *testing.T) {
	before := ArenaBytes()
	s := NewStream()
	payload := make([]byte, 200)
	for i := 1; i <= 50000; i++ {
		s.Append(ID{uint64(i), 0}, [][]byte{[]byte("p"), payload})
	}
	if ArenaBytes() < before+5<<20 {
		t.Fatalf("arena holds %d bytes after 50000 entries of 200 bytes", ArenaBytes()-before)
	}
	s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 10})
	if got := ArenaBytes() - before; got > 2*maxChunk {
		t.Fatalf("arena holds %d bytes after trimming to 10 entries", got)
	}
	for i := 50001; i <= 60000; i++ {
		s.Append(ID{uint64(i), 0}, [][]byte{[]byte("p"), payload})
	}
	if got := collect(s, ID{}, MaxID, 1, false); len(got) != 1 || got[0][:8] != "49991-0 " {
		t.Fatalf("first entry after trim and append: %q", got)
	}
	s = nil
	deadline := time.Now().Add(5 * time.Second)
	for ArenaBytes() > before {
		if time.Now().After(deadline) {
			t.Fatalf("arena holds %d bytes after the stream was dropped", ArenaBytes()-before)
		}
		runtime.GC()
		time.Sleep(time.Millisecond) // cleanups run on their own goroutine after a GC
	}
}

// TestLastEntryID checks LastEntryID against a reverse Range over appends and deletions that
// empty the last nodes (entries with their own fields too), and that it allocates nothing:
// XREADGROUP asks it on every read.
func TestLastEntryID(t *testing.T) {
	s := NewStream()
	want := func() (ID, bool) {
		var out ID
		found := false
		s.Range(ID{}, MaxID, 1, true, func(id ID, _ [][]byte) bool {
			out, found = id, true
			return false
		})
		return out, found
	}
	check := func(when string) {
		t.Helper()
		gid, gok := s.LastEntryID()
		wid, wok := want()
		if gid != wid || gok != wok {
			t.Fatalf("%s: LastEntryID = %v %v, want %v %v", when, gid, gok, wid, wok)
		}
	}
	check("empty")
	var ids []ID
	for i := range 500 {
		id := ID{uint64(1000 + i), uint64(i % 2)}
		if i%7 == 0 {
			s.Append(id, fv("other", "x", "y", "z"))
		} else {
			s.Append(id, fv("payload", "v"))
		}
		ids = append(ids, id)
	}
	check("after appends")
	// Delete from the end, so whole trailing nodes empty, then every other one from the start.
	for k := len(ids) - 1; k >= 250; k-- {
		if !s.Delete(ids[k]) {
			t.Fatalf("Delete(%v) found nothing", ids[k])
		}
		check(fmt.Sprintf("after deleting %v", ids[k]))
	}
	if n := testing.AllocsPerRun(100, func() { s.LastEntryID() }); n != 0 {
		t.Errorf("LastEntryID allocated %.1f times per call, want 0", n)
	}
	for k := 0; k < 250; k++ {
		s.Delete(ids[k])
		check(fmt.Sprintf("after deleting %v", ids[k]))
	}
	if _, ok := s.LastEntryID(); ok {
		t.Errorf("every entry deleted, LastEntryID still found one")
	}
}
