package server

import (
	"testing"
	"time"
)

// TestLoopServesBlocked: a client that blocks stays in the event loop. It is answered there
// when a loop client's write serves it, when another goroutine's write does (a subscribed RESP3
// client, which has a goroutine of its own), at its timeout (1 ms too), by CLIENT UNBLOCK, and
// what it pipelined behind the blocking command runs after the answer. A blocked client that is
// killed no longer takes what is pushed. No client leaves the loop until one subscribes.
func TestLoopServesBlocked(t *testing.T) {
	s := startServer(t, Config{})
	if s.loop == nil {
		t.Skip("no event loop")
	}
	a, b := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	steps := []struct {
		name string
		run  func() (got, want string)
	}{
		{"served by a loop client's push, then the pipelined PING", func() (string, string) {
			writeAll(t, a, cmd("BLPOP", "q", "0"), cmd("PING"))
			waitBlocked(t, s, 1)
			writeAll(t, b, cmd("RPUSH", "q", "v1"))
			return readN(t, b, 1) + readN(t, a, 2), ":1\r\n*2\r\n$1\r\nq\r\n$2\r\nv1\r\n+PONG\r\n"
		}},
		{"a timeout of 1 ms", func() (string, string) {
			writeAll(t, a, cmd("BRPOP", "empty", "0.001"), cmd("ECHO", "after"))
			return readN(t, a, 2), "*-1\r\n$5\r\nafter\r\n"
		}},
		{"XREADGROUP BLOCK served by XADD", func() (string, string) {
			writeAll(t, b, cmd("XGROUP", "CREATE", "st", "g", "$", "MKSTREAM"))
			readN(t, b, 1)
			writeAll(t, a, cmd("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "BLOCK", "0", "STREAMS", "st", ">"))
			waitBlocked(t, s, 1)
			writeAll(t, b, cmd("XADD", "st", "1-1", "f", "v"))
			return readN(t, b, 1) + readN(t, a, 1), "$3\r\n1-1\r\n*1\r\n*2\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
		}},
		{"CLIENT UNBLOCK, with the timeout reply and with an error", func() (string, string) {
			id := clientID(t, a)
			writeAll(t, a, cmd("BLPOP", "q", "0"))
			waitBlocked(t, s, 1)
			writeAll(t, b, cmd("CLIENT", "UNBLOCK", id))
			got := readN(t, b, 1) + readN(t, a, 1)
			writeAll(t, a, cmd("BLPOP", "q", "0"))
			waitBlocked(t, s, 1)
			writeAll(t, b, cmd("CLIENT", "UNBLOCK", id, "ERROR"))
			return got + readN(t, b, 1) + readN(t, a, 1), ":1\r\n*-1\r\n:1\r\n-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
		}},
		{"served by a goroutine client's push", func() (string, string) {
			sub := dialRaw(t, s.Addr())
			writeAll(t, sub, cmd("HELLO", "3"), cmd("SUBSCRIBE", "ch"))
			readN(t, sub, 2)
			writeAll(t, a, cmd("BLPOP", "q", "0"))
			waitBlocked(t, s, 1)
			writeAll(t, sub, cmd("RPUSH", "q", "v2"))
			got := readN(t, sub, 1) + readN(t, a, 1)
			sub.c.Close()
			return got, ":1\r\n*2\r\n$1\r\nq\r\n$2\r\nv2\r\n"
		}},
		{"a killed blocked client takes nothing", func() (string, string) {
			c := dialRaw(t, s.Addr())
			id := clientID(t, c)
			writeAll(t, c, cmd("BLPOP", "k", "0"))
			waitBlocked(t, s, 1)
			writeAll(t, b, cmd("CLIENT", "KILL", "ID", id))
			readN(t, b, 1)
			waitBlockedExactly(t, s, 0)
			writeAll(t, b, cmd("RPUSH", "k", "kept"), cmd("LLEN", "k"))
			return readN(t, b, 2), ":1\r\n:1\r\n"
		}},
	}
	for _, st := range steps {
		if got, want := st.run(); got != want {
			t.Errorf("%s: got %q, want %q", st.name, got, want)
		}
	}
	if n := s.loop.handoffs.Load(); n != 1 { // the subscriber alone
		t.Errorf("%d clients left the event loop; want 1 (the subscriber)", n)
	}
}

// waitBlockedExactly waits until exactly n clients are blocked.
func waitBlockedExactly(t *testing.T, s *Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		got := s.blocked.count()
		s.mu.Unlock()
		if got == n {
			return
		}
	}
	t.Fatalf("blocked clients never reached %d", n)
}

// clientID is c's CLIENT ID, as a string.
func clientID(t *testing.T, c *rawConn) string {
	t.Helper()
	writeAll(t, c, cmd("CLIENT", "ID"))
	r := readN(t, c, 1) // ":N\r\n"
	return r[1 : len(r)-2]
}
