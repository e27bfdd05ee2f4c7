package server

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestStreamReadGarbage bounds the heap bytes a large stream read allocates per byte of its
// reply. Building a value per entry and then encoding the tree into a fresh, growing output
// buffer allocated ~10 bytes per reply byte, and the collector's headroom over that garbage was
// most of the RSS a million-entry PEL cost (issue 17); entriesReply and the recycled output
// buffers (outbuf.go) bring it to near nothing once the buffers are warm.
func TestStreamReadGarbage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop a quarter of what it is given")
	}
	s := New(Config{})
	c := &client{s: s, proto: 2, authed: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	payload := strings.Repeat("x", 32)
	bs := func(a ...string) [][]byte {
		out := make([][]byte, len(a))
		for i, v := range a {
			out[i] = []byte(v)
		}
		return out
	}
	for i := range 5000 {
		c.execute(bs("XADD", "s", "*", "producer", "p"+strconv.Itoa(i%8), "seq", strconv.Itoa(i), "payload", payload))
	}
	c.execute(bs("XGROUP", "CREATE", "s", "g", "0"))
	c.execute(bs("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"))
	c.resetOut()
	for _, tc := range []struct {
		name string
		args [][]byte
		max  float64 // heap bytes per reply byte
	}{
		// A collection may empty the pool now and then, costing one buffer of ten.
		{"xrange", bs("XRANGE", "s", "-", "+"), 0.25},
		{"xrevrange", bs("XREVRANGE", "s", "+", "-", "COUNT", "4000"), 0.25},
		{"xread", bs("XREAD", "COUNT", "5000", "STREAMS", "s", "0"), 0.25},
		// History looks each pending entry up on its own: the store decodes the entry's node
		// into a fresh scratch slice each time (~2.7 bytes per reply byte; 4.7 when the
		// entry was also cloned before being encoded).
		{"xreadgroup history", bs("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"), 3.5},
	} {
		c.execute(tc.args) // warm the recycled buffers
		c.resetOut()
		var m0, m1 runtime.MemStats
		var replyBytes int
		runtime.ReadMemStats(&m0)
		for range 10 {
			c.execute(tc.args)
			replyBytes += len(c.out)
			c.resetOut() // as after the reply is written
		}
		runtime.ReadMemStats(&m1)
		if replyBytes < 10*100000 {
			t.Fatalf("%s: replies of %d bytes, want the 5,000 entries' (~400 KB each)", tc.name, replyBytes)
		}
		perByte := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(replyBytes)
		t.Logf("%s: %.3f heap bytes allocated per reply byte", tc.name, perByte)
		if perByte > tc.max {
			t.Errorf("%s: %.3f heap bytes allocated per reply byte, want at most %.2f", tc.name, perByte, tc.max)
		}
	}
}
