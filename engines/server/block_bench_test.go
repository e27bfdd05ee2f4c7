package server

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkBlockedPop: one consumer blocked in BRPOP (or XREADGROUP BLOCK), served by one
// producer's LPUSH (XADD), the queue designs' light-load path, over TCP to a server with its
// event loop. It reports the whole process's heap allocation per message (the client side here
// allocates nothing per message: prebuilt requests, fixed-size reads), the garbage that makes
// the server's collector run where Redis does no such work. QBENCH_SERVER_BLOCK_IN_LOOP=0
// re-measures a consumer served by its own goroutine.
//
//	go test ./engines/server/ -run '^$' -bench BlockedPop -benchtime 20000x
func BenchmarkBlockedPop(b *testing.B) {
	val := strings.Repeat("v", 256)
	cases := []struct {
		name           string
		setup          [][]byte
		consume, write []byte
	}{
		{"list", nil, resp3("BRPOP", "q", "0"), resp3("LPUSH", "q", val)},
		{"stream", [][]byte{resp3("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")},
			resp3("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "BLOCK", "0", "NOACK", "STREAMS", "s", ">"),
			resp3("XADD", "s", "MAXLEN", "1", "*", "p", val)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s := startServer(b, Config{})
			if s.loop == nil {
				b.Skip("no event loop")
			}
			prod, cons := dialPlain(b, s.Addr()), dialPlain(b, s.Addr())
			buf := make([]byte, 4096)
			for _, cmd := range tc.setup {
				roundTrip(b, prod, cmd, buf)
			}
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			b.ResetTimer()
			for range b.N {
				if _, err := cons.Write(tc.consume); err != nil {
					b.Fatal(err)
				}
				roundTrip(b, prod, tc.write, buf)
				readRESP(b, cons, buf)
			}
			b.StopTimer()
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N), "B/msg")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N), "allocs/msg")
		})
	}
}

func resp3(args ...string) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(sb.String())
}

func dialPlain(b *testing.B, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends cmd on c and reads its one reply.
func roundTrip(b *testing.B, c net.Conn, cmd, buf []byte) {
	if _, err := c.Write(cmd); err != nil {
		b.Fatal(err)
	}
	readRESP(b, c, buf)
}

// readRESP reads one reply whose nesting and bulk lengths it follows: enough for the replies
// here (simple strings, integers, bulk strings, arrays of them), with no allocation.
func readRESP(b *testing.B, c net.Conn, buf []byte) {
	n, want := 0, 1 // bytes held, and values still to read
	pos := 0
	for want > 0 {
		// Parse what is held; read more when a line or a bulk is incomplete.
		line := -1
		for i := pos; i+1 < n; i++ {
			if buf[i] == '\r' && buf[i+1] == '\n' {
				line = i
				break
			}
		}
		if line < 0 {
			m, err := c.Read(buf[n:])
			if err != nil {
				b.Fatal(err)
			}
			n += m
			continue
		}
		num := 0
		neg := false
		for _, ch := range buf[pos+1 : line] {
			if ch == '-' {
				neg = true
			} else if ch >= '0' && ch <= '9' {
				num = num*10 + int(ch-'0')
			}
		}
		switch buf[pos] {
		case '*':
			want--
			if !neg {
				want += num
			}
			pos = line + 2
		case '$':
			if neg {
				want--
				pos = line + 2
				break
			}
			for n < line+2+num+2 {
				m, err := c.Read(buf[n:])
				if err != nil {
					b.Fatal(err)
				}
				n += m
			}
			want--
			pos = line + 2 + num + 2
		default: // + - :
			want--
			pos = line + 2
		}
	}
}
