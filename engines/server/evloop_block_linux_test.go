package server

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLoopServesBlocked: a client that blocks stays in the event loop. It is answered there
// when a loop client's write serves it, when another goroutine's write does (a client the loop
// handed to a goroutine), at its timeout (1 ms too), by CLIENT UNBLOCK, and what it pipelined
// behind the blocking command runs after the answer. A blocked client that is killed no longer
// takes what is pushed. No blocked client leaves the loop.
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
			g := goroutineClient(t, s)
			writeAll(t, a, cmd("BLPOP", "q", "0"))
			waitBlocked(t, s, 1)
			writeAll(t, g, cmd("RPUSH", "q", "v2"))
			got := readN(t, g, 1) + readN(t, a, 1)
			g.c.Close()
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
	if n := s.loop.handoffs.Load(); n != 1 {
		t.Errorf("%d clients left the event loop; want 1 (goroutineClient's)", n)
	}
}

// goroutineClient is a client the event loop has handed to a goroutine of its own: one reply
// larger than its socket takes at once.
func goroutineClient(t *testing.T, s *Server) *rawConn {
	t.Helper()
	g := dialRaw(t, s.Addr())
	before := s.loop.handoffs.Load()
	push := cmd("RPUSH", "goroutine-client:big")
	for range 2048 {
		push = append(push, []byte(strings.Repeat("b", 4096)))
	}
	writeAll(t, g, push)
	readN(t, g, 1)
	writeAll(t, g, cmd("LRANGE", "goroutine-client:big", "0", "-1"))
	for s.loop.handoffs.Load() == before {
		time.Sleep(time.Millisecond)
	}
	readN(t, g, 1)
	return g
}

// TestLoopSubscribers: a subscriber stays in the event loop and gets what loop clients and
// goroutine clients publish, in order with its own replies; one whose socket stops taking its
// messages is handed to a writer goroutine and still gets every message, in order.
func TestLoopSubscribers(t *testing.T) {
	s := startServer(t, Config{})
	if s.loop == nil {
		t.Skip("no event loop")
	}
	sub, pub := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	writeAll(t, sub, cmd("SUBSCRIBE", "ch"))
	got := readN(t, sub, 1)
	writeAll(t, pub, cmd("PUBLISH", "ch", "m1"))
	got += readN(t, pub, 1) + readN(t, sub, 1)
	writeAll(t, sub, cmd("PING"))
	got += readN(t, sub, 1)
	other := goroutineClient(t, s) // its PUBLISH comes from outside the loop
	writeAll(t, other, cmd("PUBLISH", "ch", "m2"))
	got += readN(t, other, 1) + readN(t, sub, 1)
	want := "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n" + ":1\r\n*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nm1\r\n" +
		"*2\r\n$4\r\npong\r\n$0\r\n\r\n" + ":1\r\n*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nm2\r\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	before := s.loop.handoffs.Load()
	if before != 1 {
		t.Errorf("%d clients left the loop; want 1 (goroutineClient's)", before)
	}

	// 16 MiB of messages to a subscriber that reads none of them until the end (4 MiB could
	// all fit in loopback's autotuned socket buffers, and the subscriber then stayed).
	slow := dialRaw(t, s.Addr())
	writeAll(t, slow, cmd("SUBSCRIBE", "big"))
	readN(t, slow, 1)
	msg := strings.Repeat("m", 4096)
	const n = 4096
	for i := range n {
		writeAll(t, pub, cmd("PUBLISH", "big", fmt.Sprintf("%04d%s", i, msg)))
		readN(t, pub, 1)
	}
	if s.loop.handoffs.Load() != before+1 {
		t.Errorf("a subscriber whose socket is full stayed in the loop")
	}
	for i := range n {
		r := readN(t, slow, 1)
		if want := fmt.Sprintf("%04d", i); !strings.Contains(r, "\r\n"+want+"m") {
			t.Fatalf("message %d: got %.60q", i, r)
		}
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
