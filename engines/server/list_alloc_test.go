package server

import (
	"runtime"
	"strings"
	"testing"
)

// TestPushAllocs bounds the heap allocations of one LPUSH/RPUSH/LPOP/RPOP on a list: the
// element goes into the list's blocks off the heap (or out of them into the client's reply
// scratch), and the reply must not box an int. Every allocation per push is garbage that grows
// the Go heap (and the RSS) of a server loading a million-element list past Redis's, and costs
// the pops GC work Redis does not do.
func TestPushAllocs(t *testing.T) {
	s := New(Config{})
	c := &client{s: s, proto: 2, authed: true}
	v := []byte(strings.Repeat("x", 33))
	cases := []struct {
		name string
		args [][]byte
	}{
		{"lpush", [][]byte{[]byte("LPUSH"), []byte("l"), v}},
		{"rpush", [][]byte{[]byte("RPUSH"), []byte("l"), v}},
		{"lpop", [][]byte{[]byte("LPOP"), []byte("l")}},
		{"rpop", [][]byte{[]byte("RPOP"), []byte("l")}},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tc := range cases {
		for range 1500 { // past 255 elements, where Go starts boxing ints on the heap
			c.execute(tc.args)
		}
		c.out = c.out[:0]
		// Not testing.AllocsPerRun: it rounds down, and an 8-byte boxed int is half a tiny block.
		// The count is the process's: a goroutine another test left running (a pool's reaper, a
		// server shutting down) can add a few dozen, so the fewest of three tries is taken
		// (41 was seen once under -race in the full suite). An allocation per push is >= 1000.
		n := uint64(1 << 62)
		for range 3 {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for range 1000 {
				c.execute(tc.args)
				c.out = c.out[:0]
			}
			runtime.ReadMemStats(&m1)
			n = min(n, m1.Mallocs-m0.Mallocs)
		}
		if n > 20 { // a few for the list's chunk ring growing
			t.Errorf("%s: %d allocations for 1000 pushes, want about 0", tc.name, n)
		}
	}
}
