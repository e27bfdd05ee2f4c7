package server

import (
	"fmt"
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

// TestXreadgroupHandsOverItsBuffer: a one-stream XREAD or XREADGROUP reply that is the whole
// output becomes the output buffer, key and all, instead of being copied into it (peak RSS for
// an XREADGROUP of 1 M entries was 624 MB, Redis 355). Bound: the bytes allocated for a reply
// of 200 k entries are at most 3.5x the reply (3.0x: the entries' buffer doubling), 4.2x for
// a history read (3.9x: it looks each pending entry up, ~48 B each); with the copy they were
// 4.0x and 4.9x. History reads (ID 0) and NOACK reads add no pending entries, so what is
// counted is the reply's.
func TestXreadgroupHandsOverItsBuffer(t *testing.T) {
	const n = 200000
	for _, proto := range []int{2, 3} {
		s := New(Config{})
		c := &client{s: s, proto: proto, authed: true}
		s.mu.Lock()
		for i := range n {
			c.execute([][]byte{[]byte("XADD"), []byte("s"), []byte(fmt.Sprintf("%d-1", i+1)), []byte("field"), []byte("value-0123456789")})
			c.out = c.out[:0]
		}
		c.execute([][]byte{[]byte("XGROUP"), []byte("CREATE"), []byte("s"), []byte("g"), []byte("0")})
		c.execute([][]byte{[]byte("XREADGROUP"), []byte("GROUP"), []byte("g"), []byte("c1"), []byte("STREAMS"), []byte("s"), []byte(">")})
		want := "*1\r\n*2\r\n$1\r\ns\r\n*200000\r\n*2\r\n$3\r\n1-1\r\n"
		if proto == 3 {
			want = "%1\r\n$1\r\ns\r\n*200000\r\n*2\r\n$3\r\n1-1\r\n"
		}
		for _, tc := range []struct {
			name  string
			args  []string
			bound float64 // bytes allocated per byte of reply
		}{
			{"xreadgroup history", []string{"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0"}, 4.2},
			{"xreadgroup noack", []string{"XREADGROUP", "GROUP", "g2", "c1", "NOACK", "STREAMS", "s", ">"}, 3.5},
			{"xread", []string{"XREAD", "STREAMS", "s", "0"}, 3.5},
		} {
			t.Run(fmt.Sprintf("%s resp%d", tc.name, proto), func(t *testing.T) {
				c.execute([][]byte{[]byte("XGROUP"), []byte("CREATE"), []byte("s"), []byte("g2"), []byte("0")})
				c.out = nil
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				c.execute(splitArgs(tc.args))
				runtime.ReadMemStats(&m1)
				if !strings.HasPrefix(string(c.out), want) {
					t.Fatalf("reply starts %.60q", c.out)
				}
				if got := m1.TotalAlloc - m0.TotalAlloc; float64(got) > tc.bound*float64(len(c.out)) {
					t.Errorf("%d bytes allocated for a %d-byte reply (%.1fx)", got, len(c.out), float64(got)/float64(len(c.out)))
				}
				c.execute([][]byte{[]byte("XGROUP"), []byte("DESTROY"), []byte("s"), []byte("g2")})
			})
		}
		s.mu.Unlock()
	}
}
