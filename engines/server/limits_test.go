package server

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestDiffRedisAuth compares requirepass behaviour with a redis-server started with the same
// password.
func TestDiffRedisAuth(t *testing.T) {
	realAddr := startOwnRealRedis(t, "--requirepass", "secret")
	s := startServer(t, Config{RequirePass: "secret"})
	cases := []struct {
		name   string
		script []string
	}{
		{"noauth", []string{"NOSUCH", "PING", "GET k", "AUTH wrong", "AUTH default wrong", "AUTH nouser secret",
			"HELLO 3", "HELLO 3 AUTH default wrong", "RAW \"*11\\r\\n\""}},
		{"unauth-bulk", []string{"RAW \"*1\\r\\n$16385\\r\\n\""}},
		{"auth", []string{"AUTH secret", "PING", "RAW \"*11\\r\\n$4\\r\\nECHO\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n$1\\r\\na\\r\\n\"",
			"RESET", "PING", "HELLO 2 AUTH default secret", "PING"}},
		{"multi-noauth", []string{"MULTI", "AUTH secret", "MULTI", "PING", "EXEC"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The harness's FLUSHALL needs a password: authenticate client 0 first, then RESET it.
			script := append([]string{}, tc.script...)
			runDiffAuth(t, realAddr, s.Addr(), "secret", script)
		})
	}
}

// runDiffAuth is runDiff for servers with a password: the flush happens on a separate,
// authenticated connection.
func runDiffAuth(t *testing.T, realAddr, ourAddr, pass string, script []string) {
	t.Helper()
	for _, addr := range []string{realAddr, ourAddr} {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Password: pass, Protocol: 2})
		if err := rdb.FlushAll(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		rdb.Close()
	}
	runDiffNoFlush(t, realAddr, ourAddr, script)
}

func TestGoRedisWithPassword(t *testing.T) {
	s := startServer(t, Config{RequirePass: "pw"})
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: "pw", Protocol: proto, DB: 2})
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatalf("proto %d: %v", proto, err)
		}
		rdb.Close()
		bad := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: "nope", Protocol: proto, MaxRetries: -1})
		if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Fatalf("proto %d: wrong password err = %v", proto, err)
		}
		bad.Close()
	}
}

func TestMaxClients(t *testing.T) {
	s := startServer(t, Config{MaxClients: 2})
	var conns []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("PING\r\n"))
		buf := make([]byte, 64)
		if n, _ := c.Read(buf); string(buf[:n]) != "+PONG\r\n" {
			t.Fatalf("client %d: %q", i, buf[:n])
		}
		conns = append(conns, c)
	}
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got bytes.Buffer
	buf := make([]byte, 256)
	for {
		n, err := c.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if got.String() != "-ERR max number of clients reached\r\n" {
		t.Fatalf("third client got %q", got.String())
	}
	// CONFIG SET maxclients takes effect for new connections.
	conns[1].Write([]byte("CONFIG SET maxclients 3\r\n"))
	if n, _ := conns[1].Read(buf); string(buf[:n]) != "+OK\r\n" {
		t.Fatalf("CONFIG SET maxclients: %q", buf[:n])
	}
	c3, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c3.Write([]byte("PING\r\n"))
	c3.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := c3.Read(buf); string(buf[:n]) != "+PONG\r\n" {
		t.Fatalf("after raising maxclients: %q", buf[:n])
	}
	c3.Close()
	conns[1].Write([]byte("CONFIG SET maxclients 2\r\n"))
	conns[1].Read(buf)
	// Closing one makes room again.
	conns[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("PING\r\n"))
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := c.Read(buf)
		c.Close()
		if string(buf[:n]) == "+PONG\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room after a client left: %q", buf[:n])
		}
		time.Sleep(5 * time.Millisecond) // the server notices the close asynchronously
	}
}

// fakeConn is a net.Conn with a chosen remote address, for protected mode.
type fakeConn struct {
	net.Conn
	remote net.Addr
}

func (f fakeConn) RemoteAddr() net.Addr { return f.remote }

func TestProtectedMode(t *testing.T) {
	tests := []struct {
		pass      string
		protected bool
		remote    string
		refused   bool
	}{
		{"", true, "127.0.0.1", false},
		{"", true, "10.1.2.3", true},
		{"", true, "::1", false},
		{"pw", true, "10.1.2.3", false},
		{"", false, "10.1.2.3", false},
	}
	for _, tc := range tests {
		s := New(Config{RequirePass: tc.pass})
		s.conf.protectedMode = tc.protected
		msg := s.protectedModeRefusal(fakeConn{remote: &net.TCPAddr{IP: net.ParseIP(tc.remote), Port: 1}})
		if (msg != "") != tc.refused {
			t.Errorf("pass %q protected %v remote %s: refusal %q", tc.pass, tc.protected, tc.remote, msg)
		}
		if tc.refused && !strings.HasPrefix(msg, "DENIED Redis is running in protected mode") {
			t.Errorf("refusal text %q", msg)
		}
	}
}

// TestPubSubOutputLimit checks that a subscriber that does not read is disconnected once its
// output passes the pub/sub hard limit, and that the publisher and other clients carry on.
func TestPubSubOutputLimit(t *testing.T) {
	s := startServer(t, Config{})
	ctx := context.Background()
	rdb := newClient(t, s, 2)
	if err := rdb.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 512kb 60").Err(); err != nil {
		t.Fatal(err)
	}
	slow, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.Write([]byte("SUBSCRIBE ch\r\n"))
	waitFor(t, func() bool {
		n, _ := rdb.PubSubNumSub(ctx, "ch").Result()
		return n["ch"] == 1
	})
	msg := strings.Repeat("x", 64<<10)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := rdb.Publish(ctx, "ch", msg).Err(); err != nil {
			t.Fatal(err)
		}
		n, _ := rdb.PubSubNumSub(ctx, "ch").Result()
		if n["ch"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slow subscriber was never disconnected")
		}
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("publisher broken: %v", err)
	}
}

// waitFor polls cond (a server-side condition with no event to wait on) for up to 5s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
