package server

import (
	"bytes"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestConnModes runs the same conversations against the event loop and against a goroutine
// per connection: the replies must be identical, including for clients that leave the loop
// (a block, a subscription, replies larger than the socket takes, CLIENT KILL).
func TestConnModes(t *testing.T) {
	big := strings.Repeat("v", 1000)
	cases := []struct {
		name string
		run  func(t *testing.T, addr string) string // the replies, as seen by the clients
	}{
		{"pipeline in one write", func(t *testing.T, addr string) string {
			a := dialRaw(t, addr)
			writeAll(t, a, cmd("PING"), cmd("SET", "k", "1"), cmd("GET", "k"), cmd("RPUSH", "l", "x", "y"), cmd("LRANGE", "l", "0", "-1"), cmd("MULTI"), cmd("INCR", "k"), cmd("EXEC"))
			return readN(t, a, 8)
		}},
		{"block, then go on", func(t *testing.T, addr string) string {
			a, b := dialRaw(t, addr), dialRaw(t, addr)
			writeAll(t, a, cmd("PING"), cmd("BLPOP", "q", "5"))
			got := readN(t, a, 1)
			time.Sleep(50 * time.Millisecond) // a is blocked
			writeAll(t, b, cmd("RPUSH", "q", "v"))
			got += readN(t, b, 1) + readN(t, a, 1)
			writeAll(t, a, cmd("BLPOP", "q", "0.01"), cmd("PING"))
			return got + readN(t, a, 2)
		}},
		{"a blocked client that hangs up is not served", func(t *testing.T, addr string) string {
			a, b := dialRaw(t, addr), dialRaw(t, addr)
			writeAll(t, a, cmd("BLPOP", "gone", "0"))
			a.c.Close()
			time.Sleep(100 * time.Millisecond) // the server notices the hang-up
			writeAll(t, b, cmd("RPUSH", "gone", "v"), cmd("LLEN", "gone"))
			got := readN(t, b, 2)
			if got != ":1\r\n:1\r\n" {
				t.Errorf("the pushed element went to the hung-up client: %q", got)
			}
			return got
		}},
		{"subscribe", func(t *testing.T, addr string) string {
			a, b := dialRaw(t, addr), dialRaw(t, addr)
			writeAll(t, a, cmd("SUBSCRIBE", "ch"))
			got := readN(t, a, 1)
			writeAll(t, b, cmd("PUBLISH", "ch", "m1"), cmd("PUBLISH", "ch", "m2"))
			return got + readN(t, b, 2) + readN(t, a, 2)
		}},
		{"replies larger than the socket takes", func(t *testing.T, addr string) string {
			a := dialRaw(t, addr)
			var push [][]byte
			push = append(push, []byte("RPUSH"), []byte("big"))
			for range 2000 {
				push = append(push, []byte(big))
			}
			if err := a.send(push); err != nil {
				t.Fatal(err)
			}
			got := readN(t, a, 1)
			var cmds [][][]byte
			for range 20 {
				cmds = append(cmds, cmd("LRANGE", "big", "0", "-1"))
			}
			cmds = append(cmds, cmd("LLEN", "big"))
			writeAll(t, a, cmds...)
			time.Sleep(100 * time.Millisecond) // let the socket buffers fill
			r := readN(t, a, 21)
			return got + fmt.Sprintf("%d bytes, sum %d, ends %q", len(r), sum(r), r[len(r)-8:])
		}},
		{"many small replies past the batch limit", func(t *testing.T, addr string) string {
			a := dialRaw(t, addr)
			writeAll(t, a, cmd("SET", "s", strings.Repeat("z", 2000)))
			var cmds [][][]byte
			for range 100 {
				cmds = append(cmds, cmd("GET", "s"))
			}
			cmds = append(cmds, cmd("PING"))
			writeAll(t, a, cmds...)
			r := readN(t, a, 102)
			return fmt.Sprintf("%d bytes, ends %q", len(r), r[len(r)-7:])
		}},
		// The loop's sockets are edge-triggered: these two leave bytes (or the end of stream)
		// in the socket that no later arrival reports, so the loop must read again itself.
		{"commands then a half-close", func(t *testing.T, addr string) string {
			a := dialRaw(t, addr)
			writeAll(t, a, cmd("PING"), cmd("SET", "h", "1"), cmd("GET", "h"))
			if err := a.c.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			got := readN(t, a, 3)
			a.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := a.br.ReadByte()
			return got + fmt.Sprintf("then: %v", err) // EOF: the server closed, not a timeout
		}},
		{"a pipeline many times the read buffer in one write", func(t *testing.T, addr string) string {
			a := dialRaw(t, addr)
			var cmds [][][]byte
			for i := range 3000 {
				cmds = append(cmds, cmd("RPUSH", "p", fmt.Sprintf("%0100d", i)))
			}
			cmds = append(cmds, cmd("LINDEX", "p", "-1"))
			writeAll(t, a, cmds...)
			r := readN(t, a, len(cmds))
			return fmt.Sprintf("%d bytes, ends %q", len(r), r[len(r)-12:])
		}},
		{"client kill", func(t *testing.T, addr string) string {
			a, b := dialRaw(t, addr), dialRaw(t, addr)
			writeAll(t, a, cmd("CLIENT", "ID"))
			id := strings.TrimSpace(strings.TrimPrefix(readN(t, a, 1), ":"))
			writeAll(t, b, cmd("CLIENT", "KILL", "ID", id))
			got := readN(t, b, 1)
			_, err := a.readReply(5 * time.Second)
			return got + fmt.Sprintf("read after kill: %v", err != nil)
		}},
	}
	modes := []struct {
		name       string
		goroutines bool
	}{{"event loop", false}, {"goroutine per connection", true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want string
			for i, m := range modes {
				s := startServer(t, Config{GoroutinePerConn: m.goroutines})
				if runtime.GOOS == "linux" && (s.loop == nil) != m.goroutines {
					t.Fatalf("%s: event loop running = %v", m.name, s.loop != nil)
				}
				got := tc.run(t, s.Addr())
				if i == 0 {
					want = got
					continue
				}
				if got != want {
					t.Errorf("%s replied\n%q\n%s replied\n%q", modes[0].name, want, m.name, got)
				}
			}
			if want == "" {
				t.Fatal("no replies")
			}
		})
	}
}

func cmd(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

// writeAll sends the commands in one write.
func writeAll(t *testing.T, rc *rawConn, cmds ...[][]byte) {
	t.Helper()
	var buf bytes.Buffer
	for _, c := range cmds {
		fmt.Fprintf(&buf, "*%d\r\n", len(c))
		for _, a := range c {
			fmt.Fprintf(&buf, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := rc.c.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// readN reads n replies and returns them concatenated.
func readN(t *testing.T, rc *rawConn, n int) string {
	t.Helper()
	var out []byte
	for range n {
		r, err := rc.readReply(10 * time.Second)
		if err != nil {
			t.Fatalf("reply %d of %d: %v (after %q)", len(out), n, err, out)
		}
		out = append(out, r...)
	}
	return string(out)
}

func sum(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n += int(s[i])
	}
	return n
}
