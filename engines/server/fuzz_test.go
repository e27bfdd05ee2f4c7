package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"qbench/engines/server/resp"
)

// fuzzClient is a client of an unstarted server, for calling the dispatcher directly.
func fuzzClient(t testing.TB) (*Server, *client) {
	s := New(Config{})
	a, b := net.Pipe()
	go io.Copy(io.Discard, b) // pub/sub writers write to the connection
	c := &client{s: s, id: 1, conn: a, rd: resp.NewReader(a), proto: 2, authed: true}
	t.Cleanup(func() { c.stopAsync(); a.Close(); b.Close(); s.Close() })
	s.clients[c.id] = c
	return s, c
}

// countReplies parses b as a sequence of complete replies and returns how many there are.
func countReplies(t testing.TB, b []byte) int {
	br := bufio.NewReader(bytes.NewReader(b))
	n := 0
	for {
		if _, err := br.Peek(1); err != nil {
			return n
		}
		var out []byte
		if err := readOne(br, &out); err != nil {
			t.Fatalf("malformed reply stream after %d replies: %v\n%q", n, err, b)
		}
		n++
	}
}

// FuzzCommands sends arbitrary argument vectors (built from a command name and arguments
// separated by spaces) to the dispatcher and checks it never panics and writes exactly one
// reply per command.
func FuzzCommands(f *testing.F) {
	for _, name := range sortedCommandNames() {
		f.Add(name, "k 0 1", false)
		f.Add(name, "k 0 1", true)
	}
	seeds := []string{
		"XADD s MAXLEN ~ 1 LIMIT 5 * a 1", "XADD s 1-* a", "XREADGROUP GROUP g c COUNT 1 STREAMS s >",
		"XGROUP CREATE s g $ MKSTREAM ENTRIESREAD 3", "XCLAIM s g c 0 1 2 IDLE 5 FORCE JUSTID LASTID 9",
		"XAUTOCLAIM s g c 0 (1 COUNT 2 JUSTID", "XPENDING s g IDLE 1 - + 5 c", "XINFO STREAM s FULL COUNT 2",
		"LPOS l a RANK -1 COUNT 0 MAXLEN 5", "LMPOP 2 a b LEFT COUNT 3", "BLMPOP 0.1 1 a RIGHT",
		"SET k v EX 10 GET", "CLIENT KILL ID 1", "CONFIG SET stream-node-max-entries 2", "HELLO 3 AUTH default x",
		"SUBSCRIBE a b", "MULTI", "EXEC", "WATCH k", "XSETID s 5 ENTRIESADDED 3 MAXDELETEDID 2",
		"SADD t 1 a", "SPOP t 5", "SRANDMEMBER t -3", "HSET h f v g w", "HINCRBY h n 9", "MSET a 1 b 2",
		"INCRBYFLOAT f 1e400", "RENAME l l2", "MOVE l 3", "SWAPDB 0 2", "OBJECT ENCODING l",
		"FUNCTION LIST WITHCODE", "CLIENT UNBLOCK 1 ERROR",
	}
	for _, s := range seeds {
		name, rest, _ := strings.Cut(s, " ")
		f.Add(name, rest, false)
		f.Add(name, rest, true)
	}
	f.Fuzz(func(t *testing.T, name, rest string, resp3 bool) {
		lname := strings.ToLower(name)
		if lname == "debug" || lname == "shutdown" {
			return // they sleep or stop the process by design
		}
		if lname == "client" && strings.HasPrefix(strings.ToLower(rest), "reply") {
			return // CLIENT REPLY OFF|SKIP withholds replies by design
		}
		watchdog := time.AfterFunc(3*time.Second, func() { panic(fmt.Sprintf("command hung: %q %q", name, rest)) })
		defer watchdog.Stop()
		s, c := fuzzClient(t)
		if resp3 {
			c.proto = 3
		}
		setup := [][]string{
			{"XADD", "s", "1-1", "a", "1"}, {"XADD", "s", "2-1", "b", "2", "c", "3"},
			{"XGROUP", "CREATE", "s", "g", "0"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
			{"RPUSH", "l", "a", "b", "a"}, {"SET", "k", "1"},
		}
		args := [][]byte{[]byte(name)}
		for _, a := range strings.Split(rest, " ") {
			args = append(args, []byte(a))
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, cmd := range setup {
			var a [][]byte
			for _, x := range cmd {
				a = append(a, []byte(x))
			}
			c.execute(a)
		}
		c.out = c.out[:0]
		// Twice: the second run sees the state the first left.
		for i := 0; i < 2; i++ {
			before := len(c.out)
			blk := c.execute(args)
			if blk != nil {
				// Nobody waits in a fuzz run: time it out at once.
				s.blocked.remove(blk)
				c.reply(blk.timeoutReply)
			}
			got := countReplies(t, c.out[before:])
			want := 1
			if sub, isSub := map[string]bool{"subscribe": true, "psubscribe": true, "unsubscribe": true, "punsubscribe": true}[lname]; sub && isSub {
				continue // one reply per channel
			}
			if got != want {
				t.Fatalf("%q wrote %d replies, want %d: %q", args, got, want, c.out[before:])
			}
		}
	})
}

// TestProtocolErrorClosesOnlyThatClient: a malformed frame gets "-ERR Protocol error: ..." and
// that connection closes; another client keeps working.
func TestProtocolErrorClosesOnlyThatClient(t *testing.T) {
	s := startServer(t, Config{})
	good := dialRaw(t, s.Addr())
	bad := dialRaw(t, s.Addr())
	bad.c.Write([]byte("*1\r\n$4\r\nPING\r\n*1\r\n+x\r\n"))
	for _, want := range []string{"+PONG\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"} {
		b, err := bad.readReply(5e9)
		if err != nil || string(b) != want {
			t.Fatalf("bad client got %q, %v; want %q", b, err, want)
		}
	}
	if _, err := bad.readReply(5e9); err == nil {
		t.Fatal("connection not closed after a protocol error")
	}
	good.send([][]byte{[]byte("PING")})
	if b, err := good.readReply(5e9); err != nil || string(b) != "+PONG\r\n" {
		t.Fatalf("other client got %q, %v", b, err)
	}
}
