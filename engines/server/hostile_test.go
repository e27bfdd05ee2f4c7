package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
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

// rawExchange sends b on a new connection and returns every byte received until the server
// closes it (or 2 s pass: closed is then false).
func rawExchange(t *testing.T, addr string, b string) (got string, closed bool) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte(b))
	nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := nc.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			var ne net.Error
			return string(out), !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

// TestHTTPIsDropped: an HTTP request carrying commands in its body (cross-protocol scripting
// from a web page) is dropped at POST or Host: without running anything, byte for byte as
// redis-server 7.0.15 does, and the attempt is logged with Redis's words.
func TestHTTPIsDropped(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	s := startServer(t, Config{Logf: func(f string, a ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); mu.Unlock() }})
	real := startOwnRealRedis(t)
	cases := []struct{ name, in, key string }{
		{"POST with a body", "POST / HTTP/1.1\r\nHost: 127.0.0.1:6379\r\nContent-Type: text/plain\r\n\r\nSET xproto1 pwned\r\n", "xproto1"},
		{"Host first", "Host: 127.0.0.1\r\nSET xproto2 pwned\r\n", "xproto2"},
		{"post in a multibulk, after a command", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\npost\r\n$1\r\n/\r\n*3\r\n$3\r\nSET\r\n$7\r\nxproto3\r\n$5\r\npwned\r\n", "xproto3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, side := range []struct{ name, addr string }{{"redis-server", real}, {"qbench", s.Addr()}} {
				got, closed := rawExchange(t, side.addr, tc.in)
				if !closed {
					t.Errorf("%s kept the connection open (sent %q)", side.name, got)
				}
				if got != "" {
					t.Errorf("%s sent %q before closing, want nothing", side.name, got)
				}
				if v := mustPDial(t, side.addr).mustDo(t, "GET", tc.key); v != nil {
					t.Errorf("%s ran the SET in the request: %s = %v", side.name, tc.key, v)
				}
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	const want = "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted."
	n := 0
	for _, l := range logs {
		if l == want {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the warning was logged %d times, want once (at most once a minute): %q", n, logs)
	}
}

// TestProtectedConfigsAndDebug: with Redis 7.0's defaults (enable-protected-configs no,
// enable-debug-command no) CONFIG SET dir and dbfilename and DEBUG are refused with
// redis-server's exact replies; "local" allows them from loopback; both options are immutable.
// (CONFIG SET dir used to create the tree, and SAVE wrote there; DEBUG was on by default.)
func TestProtectedConfigsAndDebug(t *testing.T) {
	real := startOwnRealRedis(t, "--enable-debug-command", "no", "--enable-protected-configs", "no")
	s := startServer(t, Config{})
	dir := t.TempDir() + "/evil"
	cmds := [][]string{
		{"CONFIG", "SET", "dir", dir},
		{"CONFIG", "SET", "dbfilename", "authorized_keys"},
		{"CONFIG", "SET", "maxclients", "100", "dir", dir},
		{"CONFIG", "SET", "enable-debug-command", "yes"},
		{"CONFIG", "SET", "enable-protected-configs", "yes"},
		{"CONFIG", "GET", "enable-debug-command"},
		{"CONFIG", "GET", "enable-protected-configs"},
		{"DEBUG", "SLEEP", "0"},
		{"MULTI"}, {"DEBUG", "SLEEP", "0"}, {"EXEC"},
	}
	rc, oc := mustPDial(t, real), mustPDial(t, s.Addr())
	for _, cmd := range cmds {
		want, werr := rc.do(cmd...)
		got, gerr := oc.do(cmd...)
		if fmt.Sprint(got, gerr) != fmt.Sprint(want, werr) {
			t.Errorf("%q: got %q, redis-server %q", cmd, got, want)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s was created", dir)
	}
	local := startServer(t, Config{EnableDebugCommand: "local", EnableProtectedConfigs: "local"})
	lc := mustPDial(t, local.Addr())
	lc.mustDo(t, "DEBUG", "SLEEP", "0")
	lc.mustDo(t, "CONFIG", "SET", "dir", t.TempDir())
	if err := New(Config{EnableDebugCommand: "sometimes"}).Start(); err == nil {
		t.Error("enable-debug-command sometimes accepted")
	}
}

// TestBindIPv4IsIPv4Only: --bind 0.0.0.0 listens on IPv4 only, as redis-server's bind does
// (Go's "tcp" on 0.0.0.0 opened a dual-stack socket that also accepted [::1]).
func TestBindIPv4IsIPv4Only(t *testing.T) {
	probe, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	probe.Close()
	s := startServer(t, Config{Addr: "0.0.0.0:0"})
	_, port, _ := net.SplitHostPort(s.Addr())
	if nc, err := net.DialTimeout("tcp6", "[::1]:"+port, time.Second); err == nil {
		nc.Close()
		t.Fatalf("a server bound to 0.0.0.0 accepted a connection on [::1]:%s", port)
	}
	if v := mustPDial(t, "127.0.0.1:"+port).mustDo(t, "PING"); v != "PONG" {
		t.Fatalf("PING on IPv4 = %v", v)
	}
	if got := listenNetwork("[::1]:6379"); got != "tcp6" {
		t.Fatalf("listenNetwork([::1]) = %s", got)
	}
}

// TestAuthPasswords: right, wrong, a prefix and a longer string (the comparison is in constant
// time, crypto/subtle; that it takes constant time is not measured here).
func TestAuthPasswords(t *testing.T) {
	s := startServer(t, Config{RequirePass: "s3cret"})
	c := mustPDial(t, s.Addr())
	for _, tc := range []struct{ pass, want string }{
		{"s3cre", "WRONGPASS invalid username-password pair or user is disabled."},
		{"s3cret!", "WRONGPASS invalid username-password pair or user is disabled."},
		{"", "WRONGPASS invalid username-password pair or user is disabled."},
		{"s3cret", "OK"},
	} {
		v, err := c.do("AUTH", tc.pass)
		if err != nil || fmt.Sprint(v) != tc.want {
			t.Errorf("AUTH %q = %v, %v; want %s", tc.pass, v, err, tc.want)
		}
	}
}
