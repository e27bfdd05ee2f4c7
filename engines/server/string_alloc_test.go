package server

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"qbench/engines/server/store"
)

// TestAppendAmortised: APPEND and SETRANGE grow a string in place. They used to copy the whole
// value on every call: 20 APPENDs of 10 B to a 100 MB string took 0.5-1 s and 470 MB more
// RSS (Redis: 0.01 s, none). Measured by bytes allocated, not time: 1,000 calls adding 10 B
// each to an 8 MB string may allocate at most one regrowth (under 10 MB), where copying
// allocated 8 GB; the value read back is exact.
func TestAppendAmortised(t *testing.T) {
	const size = 8 << 20
	for _, tc := range []struct {
		name string
		args func(i int) [][]byte
	}{
		{"append", func(i int) [][]byte { return [][]byte{[]byte("APPEND"), []byte("k"), []byte("0123456789")} }},
		{"setrange-end", func(i int) [][]byte {
			return [][]byte{[]byte("SETRANGE"), []byte("k"), []byte(fmt.Sprint(size + 10*i)), []byte("0123456789")}
		}},
		{"setrange-middle", func(i int) [][]byte {
			return [][]byte{[]byte("SETRANGE"), []byte("k"), []byte(fmt.Sprint(10 * i)), []byte("0123456789")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{})
			c := &client{s: s, proto: 2, authed: true}
			s.mu.Lock()
			defer s.mu.Unlock()
			c.execute([][]byte{[]byte("SET"), []byte("k"), []byte(strings.Repeat("x", size))})
			c.out = c.out[:0]
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for i := range 1000 {
				c.execute(tc.args(i))
				c.out = c.out[:0]
			}
			runtime.ReadMemStats(&m1)
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 10<<20 {
				t.Errorf("%d bytes allocated by 1,000 calls adding 10 B each to an 8 MB string, want under 10 MB", got)
			}
			sv, _ := c.getString([]byte("k"))
			want := strings.Repeat("x", size) + strings.Repeat("0123456789", 1000)
			if tc.name == "setrange-middle" {
				want = strings.Repeat("0123456789", 1000) + strings.Repeat("x", size-10000)
			}
			if string(sv.B) != want {
				t.Errorf("value: %d bytes, not the %d expected", len(sv.B), len(want))
			}
		})
	}
}

// TestHrandfieldNegativeCountMemory: HRANDFIELD with a large negative count encodes its picks
// straight into the output buffer. It gathered them in a slice of pairs and a reply array
// first: 126 MB more for -1000000 (Redis: 8). Bound: the bytes allocated are at most 1.5x the
// reply's size (room for it is made at once, from the hash's mean field size).
func TestHrandfieldNegativeCountMemory(t *testing.T) {
	s := New(Config{})
	c := &client{s: s, proto: 2, authed: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.execute([][]byte{[]byte("HSET"), []byte("h"), []byte("f1"), []byte("v1"), []byte("f2"), []byte("v2")})
	c.out = c.out[:0]
	for _, wv := range []bool{false, true} {
		args := [][]byte{[]byte("HRANDFIELD"), []byte("h"), []byte("-1000000")}
		if wv {
			args = append(args, []byte("WITHVALUES"))
		}
		c.out = nil
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c.execute(args)
		runtime.ReadMemStats(&m1)
		size := len(c.out)
		per := 8 // "$2\r\nf1\r\n"
		if wv {
			per = 16
		}
		if size != 10+per*1000000 && size != 11+per*1000000 {
			t.Fatalf("withvalues %v: reply of %d bytes", wv, size)
		}
		if got := m1.TotalAlloc - m0.TotalAlloc; got > uint64(3*size/2) {
			t.Errorf("withvalues %v: %d bytes allocated for a %d-byte reply", wv, got, size)
		}
	}
}

// TestLrangeMemory: LRANGE encodes the list straight into the output buffer, sized once. It
// copied every element into a reply array first: a 4 M-element LRANGE peaked at 622 MB where
// Redis took 205. Bound: the bytes allocated for the reply of 1 M elements of 15 B are at
// most 1.5x the reply.
func TestLrangeMemory(t *testing.T) {
	s := New(Config{})
	c := &client{s: s, proto: 2, authed: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	push := [][]byte{[]byte("RPUSH"), []byte("l")}
	for i := range 1000 {
		push = append(push, []byte(fmt.Sprintf("element-%07d", i)))
	}
	for range 1000 {
		c.execute(push)
	}
	c.out = nil
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c.execute([][]byte{[]byte("LRANGE"), []byte("l"), []byte("0"), []byte("-1")})
	runtime.ReadMemStats(&m1)
	if want := 10 + 1000000*(5+15+2); len(c.out) != want { // *1000000, $15 element-NNNNNNN
		t.Fatalf("reply of %d bytes, want %d", len(c.out), want)
	}
	if got := m1.TotalAlloc - m0.TotalAlloc; got > uint64(len(c.out)*3/2) {
		t.Errorf("%d bytes allocated for a %d-byte reply", got, len(c.out))
	}
}

// TestSetAdoptsLargeValue: a large SET value that arrived alone is kept in the query buffer it
// arrived in (no copy), and stays exact while the connection goes on: commands pipelined after
// it, an in-place SETRANGE, and a second large SET on the same connection.
func TestSetAdoptsLargeValue(t *testing.T) {
	s := startServer(t, Config{})
	c := dialRaw(t, s.Addr())
	big1 := strings.Repeat("a", 3<<20)
	big2 := strings.Repeat("b", 2<<20)
	script := [][]string{
		{"SET", "k1", big1}, {"SET", "small", "x"}, {"SETRANGE", "k1", "1", "ZZ"}, {"SET", "k2", big2},
		{"PING"}, {"STRLEN", "k1"}, {"GETRANGE", "k1", "0", "4"}, {"GETRANGE", "k2", "-3", "-1"}, {"GET", "small"},
	}
	want := []string{"+OK\r\n", "+OK\r\n", ":3145728\r\n", "+OK\r\n", "+PONG\r\n", ":3145728\r\n", "$5\r\naZZaa\r\n", "$3\r\nbbb\r\n", "$1\r\nx\r\n"}
	for _, cmd := range script { // pipelined: all sent before any reply is read
		if err := c.send(splitArgs(cmd)); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range want {
		b, err := c.readReply(5 * time.Second)
		if err != nil || string(b) != w {
			t.Fatalf("%s: %.40q %v, want %q", script[i][0], b, err, w)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.store.DBs[0].Get("k1").(*store.String).B
	if string(v) != "aZZ"+big1[3:] {
		t.Fatal("k1 changed")
	}
	if string(s.store.DBs[0].Get("k2").(*store.String).B) != big2 {
		t.Fatal("k2 changed")
	}
}

// TestXrangeHandsOverItsBuffer: an XRANGE reply that is the whole output becomes the output
// buffer instead of being copied into it, and the entries' buffer grows by doubling, not by
// append's quarters (a 500 k-entry XRANGE peaked at 365 MB, Redis 167). Bound: the bytes
// allocated for the reply of 200 k entries are at most 4x the reply (doubling's worst case);
// they were 6.9x.
func TestXrangeHandsOverItsBuffer(t *testing.T) {
	s := New(Config{})
	c := &client{s: s, proto: 2, authed: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range 200000 {
		c.execute([][]byte{[]byte("XADD"), []byte("s"), []byte(fmt.Sprintf("%d-1", i+1)), []byte("field"), []byte("value-0123456789")})
		c.out = c.out[:0]
	}
	c.out = nil
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c.execute([][]byte{[]byte("XRANGE"), []byte("s"), []byte("-"), []byte("+")})
	runtime.ReadMemStats(&m1)
	if !strings.HasPrefix(string(c.out), "*200000\r\n*2\r\n$3\r\n1-1\r\n") {
		t.Fatalf("reply starts %.40q", c.out)
	}
	if got := m1.TotalAlloc - m0.TotalAlloc; got > uint64(len(c.out)*4) {
		t.Errorf("%d bytes allocated for a %d-byte reply", got, len(c.out))
	}
}

// TestPubsubLimitCountsInflight: the pubsub output limit counts the bytes the writer goroutine
// is still writing to a slow subscriber, not only those queued behind them (a 57 MB burst
// stayed under a 32 MB hard limit that way: 130-171 MB held where Redis, counting its whole
// reply list, disconnected the subscriber).
func TestPubsubLimitCountsInflight(t *testing.T) {
	s := New(Config{})
	a, b := net.Pipe()
	defer b.Close()
	c := &client{s: s, conn: a, async: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conf.obuf[obufPubsub] = obufLimit{hard: 1 << 20}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.pending.pushCopy(make([]byte, 100))
	s.checkLimitLocked(c, time.Now())
	if c.killed {
		t.Fatal("killed at 100 bytes")
	}
	c.inflight = 1 << 20
	s.checkLimitLocked(c, time.Now())
	if !c.killed {
		t.Fatal("not killed with 1 MB in flight and a 1 MB hard limit")
	}
}
