package server

import (
	"net"
	"testing"
	"time"
)

// TestAnnouncedBulksDoNotReserveMemory: eight connections each announce a 512 MB argument and
// send one byte of it. The server must not reserve the announced sizes: its RSS stays under
// 100 MB, then and after the connections close (it used to reach 2.1 GB and stay there).
func TestAnnouncedBulksDoNotReserveMemory(t *testing.T) {
	addr, pid := startChildServer(t)
	base := rssOf(t, pid)
	// Two rounds: memory freed by the first is reused (and zeroed, so touched) by the second.
	round(t, addr, 100*time.Millisecond)
	var conns []net.Conn
	for i := 0; i < 8; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := nc.Write([]byte("*2\r\n$3\r\nSET\r\n$536870912\r\nx")); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
	}
	time.Sleep(500 * time.Millisecond) // let the server read and react
	during := rssOf(t, pid)
	for _, nc := range conns {
		nc.Close()
	}
	time.Sleep(500 * time.Millisecond)
	after := rssOf(t, pid)
	t.Logf("server RSS: %.1f MB at start, %.1f MB with 8 x 512 MB announced, %.1f MB after they closed", mb(base), mb(during), mb(after))
	if during > 100<<20 || after > 100<<20 {
		t.Fatalf("RSS %.1f MB during, %.1f MB after: want under 100 MB", mb(during), mb(after))
	}
}

// round opens eight connections announcing 512 MB each, waits, and closes them.
func round(t *testing.T, addr string, wait time.Duration) {
	var conns []net.Conn
	for i := 0; i < 8; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte("*2\r\n$3\r\nSET\r\n$536870912\r\nx"))
		conns = append(conns, nc)
	}
	time.Sleep(wait)
	for _, nc := range conns {
		nc.Close()
	}
	time.Sleep(wait)
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
