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
	c := lockedClient(t)
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

// TestStreamSmallReadGarbage bounds what a consumer's one-entry XREADGROUP costs the heap, as
// at light load (compare-servers' cells: every XADD answers a blocked consumer with one entry).
// The reply was built in a fresh buffer grown by append and dropped after the copy into the
// connection's output buffer: 3.5 heap bytes per reply byte (1,135 bytes per XADD and read),
// 2.2 with small reply buffers recycled too (outbuf.go), 1.7 (546 bytes) with LastEntryID
// allocating nothing.
func TestStreamSmallReadGarbage(t *testing.T) {
	c := lockedClient(t)
	payload := []byte(strings.Repeat("x", 256))
	xadd := [][]byte{[]byte("XADD"), []byte("s"), []byte("*"), []byte("p"), payload}
	read := [][]byte{[]byte("XREADGROUP"), []byte("GROUP"), []byte("g"), []byte("c"), []byte("COUNT"), []byte("16"), []byte("STREAMS"), []byte("s"), []byte(">")}
	c.execute(xadd)
	c.execute([][]byte{[]byte("XGROUP"), []byte("CREATE"), []byte("s"), []byte("g"), []byte("0")})
	c.resetOut()
	step := func() int {
		c.execute(xadd)
		c.resetOut()
		c.execute(read)
		n := len(c.out)
		c.resetOut()
		return n
	}
	// A large reply's recycled buffer, left by another test, would serve these small ones.
	for i := 0; i < 100 && bigBufs.Get() != nil; i++ {
	}
	for range 200 { // warm the recycled buffers and the stream's node
		step()
	}
	var replyBytes int
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range 1000 {
		replyBytes += step()
	}
	runtime.ReadMemStats(&m1)
	if replyBytes < 1000*256 {
		t.Fatalf("replies of %d bytes, want 1,000 one-entry replies of over 256 bytes", replyBytes)
	}
	perByte := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(replyBytes)
	t.Logf("XADD + one-entry XREADGROUP: %.3f heap bytes allocated per reply byte, %.0f per pair", perByte, float64(m1.TotalAlloc-m0.TotalAlloc)/1000)
	if perByte > 2.8 {
		t.Errorf("%.3f heap bytes allocated per reply byte of a one-entry XREADGROUP (with its XADD), want at most 2.8", perByte)
	}
}

// BenchmarkStreamSmallRead is TestStreamSmallReadGarbage's step, XADD and a one-entry
// XREADGROUP, for its CPU and allocations (go test -bench StreamSmallRead -benchmem).
func BenchmarkStreamSmallRead(b *testing.B) {
	c := lockedClient(b)
	payload := []byte(strings.Repeat("x", 256))
	xadd := [][]byte{[]byte("XADD"), []byte("s"), []byte("*"), []byte("p"), payload}
	read := [][]byte{[]byte("XREADGROUP"), []byte("GROUP"), []byte("g"), []byte("c"), []byte("NOACK"), []byte("COUNT"), []byte("16"), []byte("STREAMS"), []byte("s"), []byte(">")}
	c.execute(xadd)
	c.execute([][]byte{[]byte("XGROUP"), []byte("CREATE"), []byte("s"), []byte("g"), []byte("0")})
	c.resetOut()
	b.ReportAllocs()
	for b.Loop() {
		c.execute(xadd)
		c.resetOut()
		c.execute(read)
		c.resetOut()
	}
}

// lockedClient is a client of a fresh server whose store lock is held until the test ends, as
// a command's is while it runs. A test (not a benchmark) is skipped under the race detector,
// which makes sync.Pool drop a quarter of what it is given.
func lockedClient(tb testing.TB) *client {
	if _, isTest := tb.(*testing.T); isTest && raceEnabled {
		tb.Skip("the race detector makes sync.Pool drop a quarter of what it is given")
	}
	s := New(Config{})
	s.mu.Lock()
	tb.Cleanup(s.mu.Unlock)
	return &client{s: s, proto: 2, authed: true}
}
