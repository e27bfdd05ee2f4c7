package server

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"qbench/engines/server/resp"
)

// The differential harness: the same script goes to a real redis-server and to our server over
// raw TCP, and the raw replies must be byte-identical after normalising what is inherently
// different (auto-generated stream IDs, clock values).
//
// A script is lines in a small language; arguments are split like Redis inline commands, so
// "quoted strings" work:
//
//	CMD args...        client 0 sends CMD and reads its reply
//	@N CMD args...     client N sends and reads
//	@N& CMD args...    client N sends without reading (a blocking command); the harness waits
//	                   until both servers report one more blocked client
//	@N<                client N reads one reply
//	~CMD ...           like CMD, but every integer in the reply is compared as "#" (idle times)
//	RAW <go-quoted>    client 0 sends the bytes as is and reads one reply
//
// Every script ends with PING on every client used, to catch a desynchronised connection.

// redisServer is a real redis-server started for the tests.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
	dir  string // removed with the server when it is the shared one
}

var (
	realRedisOnce sync.Once
	realRedis     *redisServer
	realRedisErr  error
)

// startRealRedis starts redis-server on a free loopback port in a temp dir, once per test
// binary. A missing redis-server, or one of another version than the tests compare with
// (differentialRedis), skips the test, unless CI=true, where it fails.
func startRealRedis(t *testing.T) string {
	t.Helper()
	path := differentialRedis(t)
	realRedisOnce.Do(func() {
		dir, err := os.MkdirTemp("", "qbench-redis-")
		if err != nil {
			realRedisErr = err
			return
		}
		realRedis, realRedisErr = launchRedis(path, dir)
		if realRedis != nil {
			realRedis.dir = dir
		}
	})
	if realRedisErr != nil {
		t.Fatal(realRedisErr)
	}
	return realRedis.addr
}

// startOwnRealRedis starts a private redis-server for one test, killed by PID at cleanup.
func startOwnRealRedis(t testing.TB, extra ...string) string {
	t.Helper()
	path := differentialRedis(t)
	r, err := launchRedis(path, t.TempDir(), extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Process.Wait() })
	return r.addr
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func launchRedis(path, dir string, extra ...string) (*redisServer, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "redis.log",
			"--enable-debug-command", "yes"}, extra...)
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case err := <-exited:
				lastErr = fmt.Errorf("redis-server exited: %v", err)
			default:
			}
			if lastErr != nil {
				break
			}
			c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
			if err == nil {
				c.Close()
				// Re-wrap so Cleanup can Wait without racing the goroutine above.
				return &redisServer{addr: addr, cmd: &exec.Cmd{Process: cmd.Process}}, nil
			}
			time.Sleep(5 * time.Millisecond) // polling a port that is not yet listening
		}
		if lastErr == nil {
			cmd.Process.Kill()
			lastErr = fmt.Errorf("redis-server on %s did not start", addr)
		}
	}
	return nil, lastErr
}

// TestMain kills the shared redis-server after the tests.
func TestMain(m *testing.M) {
	if os.Getenv(childServerEnv) != "" {
		runChildServer()
	}
	code := m.Run()
	if realRedis != nil {
		realRedis.cmd.Process.Kill()
		realRedis.cmd.Process.Wait()
		os.RemoveAll(realRedis.dir)
	}
	os.Exit(code)
}

// rawConn is one client connection of the harness.
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) send(args [][]byte) error {
	var b []byte
	b = resp.AppendArrayLen(b, len(args))
	for _, a := range args {
		b = resp.AppendBulk(b, a)
	}
	_, err := rc.c.Write(b)
	return err
}

// readReply reads one complete reply and returns its raw bytes.
func (rc *rawConn) readReply(timeout time.Duration) ([]byte, error) {
	rc.c.SetReadDeadline(time.Now().Add(timeout))
	defer rc.c.SetReadDeadline(time.Time{})
	var out []byte
	err := readOne(rc.br, &out)
	return out, err
}

func readOne(br *bufio.Reader, out *[]byte) error {
	line, err := br.ReadBytes('\n')
	*out = append(*out, line...)
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io_ReadFull(br, buf); err != nil {
			return err
		}
		*out = append(*out, buf...)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readOne(br, out); err != nil {
				return err
			}
		}
		if line[0] == '|' { // an attribute precedes the real reply
			return readOne(br, out)
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line)
}

func io_ReadFull(br *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := br.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// normaliser maps auto-generated stream IDs (13+ digit ms) to ID1, ID2... in order of first
// appearance, separately for each server.
type normaliser struct{ ids map[string]string }

var (
	autoIDRe   = regexp.MustCompile(`\b1[0-9]{12,}-[0-9]+\b`)
	raxNodesRe = regexp.MustCompile(`radix-tree-nodes\r\n:[0-9]+\r`)
	helloIDRe  = regexp.MustCompile(`\$2\r\nid\r\n:[0-9]+\r`)
	bigIntRe   = regexp.MustCompile(`(?m)^:1[0-9]{12,}\r$`)
	anyIntRe   = regexp.MustCompile(`(?m)^:-?[0-9]+\r$`)
	bulkLenRe  = regexp.MustCompile(`(?m)^\$[0-9]+\r\n(ID[0-9]+|T)\r$`)
	timeBulkRe = regexp.MustCompile(`(?m)^(\$[0-9]+\r\n)1[0-9]{12,}\r$`)
)

func (n *normaliser) apply(b []byte, allInts bool) string {
	if n.ids == nil {
		n.ids = map[string]string{}
	}
	s := autoIDRe.ReplaceAllStringFunc(string(b), func(id string) string {
		if v, ok := n.ids[id]; ok {
			return v
		}
		v := fmt.Sprintf("ID%d", len(n.ids)+1)
		n.ids[id] = v
		return v
	})
	// radix-tree-nodes counts the radix tree's internal nodes, an artefact of Redis's rax.
	s = raxNodesRe.ReplaceAllString(s, "radix-tree-nodes\r\n:#\r")
	s = helloIDRe.ReplaceAllString(s, "$$2\r\nid\r\n:#\r")
	s = bigIntRe.ReplaceAllString(s, ":T\r")
	s = timeBulkRe.ReplaceAllString(s, "$$T\r")
	if allInts {
		s = anyIntRe.ReplaceAllString(s, ":#\r")
	}
	// Bulk lengths change when IDs are replaced; compare "$?" instead.
	s = bulkLenRe.ReplaceAllStringFunc(s, func(m string) string {
		_, rest, _ := strings.Cut(m, "\n")
		return "$?\r\n" + rest
	})
	return s
}

// diffSide is one server under comparison.
type diffSide struct {
	name    string
	addr    string
	conns   map[int]*rawConn
	control *rawConn
	norm    normaliser
	t       *testing.T
}

func (sd *diffSide) conn(i int) *rawConn {
	if c, ok := sd.conns[i]; ok {
		return c
	}
	c := dialRaw(sd.t, sd.addr)
	sd.conns[i] = c
	return c
}

func (sd *diffSide) blockedClients() int {
	if sd.control == nil {
		sd.control = dialRaw(sd.t, sd.addr)
	}
	sd.control.send([][]byte{[]byte("INFO"), []byte("clients")})
	b, err := sd.control.readReply(5 * time.Second)
	if err != nil {
		sd.t.Fatalf("%s: INFO clients: %v", sd.name, err)
	}
	m := regexp.MustCompile(`blocked_clients:(\d+)`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// runDiff runs script against both servers and reports every differing reply.
func runDiff(t *testing.T, realAddr, ourAddr string, script []string) {
	t.Helper()
	for _, addr := range []string{realAddr, ourAddr} {
		c := dialRaw(t, addr)
		c.send([][]byte{[]byte("FLUSHALL")})
		if _, err := c.readReply(5 * time.Second); err != nil {
			t.Fatalf("%s: FLUSHALL: %v", addr, err)
		}
		c.c.Close()
	}
	runDiffNoFlush(t, realAddr, ourAddr, script)
}

// runDiffNoFlush is runDiff without emptying the servers first.
func runDiffNoFlush(t *testing.T, realAddr, ourAddr string, script []string) {
	t.Helper()
	sides := []*diffSide{
		{name: "redis", addr: realAddr, conns: map[int]*rawConn{}, t: t},
		{name: "qbench", addr: ourAddr, conns: map[int]*rawConn{}, t: t},
	}
	used := map[int]bool{0: true}
	step := func(lineNo int, line string) {
		t.Helper()
		client, noRead, readOnly, allInts, raw := 0, false, false, false, []byte(nil)
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "@") {
			sp := strings.IndexAny(l, " <")
			if sp < 0 {
				sp = len(l)
			}
			spec := l[1:sp]
			if strings.HasSuffix(spec, "&") {
				noRead = true
				spec = strings.TrimSuffix(spec, "&")
			}
			n, err := strconv.Atoi(spec)
			if err != nil {
				t.Fatalf("line %d: bad client in %q", lineNo, line)
			}
			client = n
			l = strings.TrimSpace(l[sp:])
			if l == "<" {
				readOnly = true
			}
		}
		if strings.HasPrefix(l, "~") {
			allInts = true
			l = l[1:]
		}
		if strings.HasPrefix(l, "RAW ") {
			s, err := strconv.Unquote(strings.TrimSpace(l[4:]))
			if err != nil {
				t.Fatalf("line %d: RAW needs a Go-quoted string: %v", lineNo, err)
			}
			raw = []byte(s)
		}
		used[client] = true
		var args [][]byte
		if !readOnly && raw == nil {
			var ok bool
			args, ok = resp.SplitArgs([]byte(l))
			if !ok || len(args) == 0 {
				t.Fatalf("line %d: cannot split %q", lineNo, line)
			}
		}
		var before []int
		if noRead {
			for _, sd := range sides {
				before = append(before, sd.blockedClients())
			}
		}
		got := make([]string, len(sides))
		for i, sd := range sides {
			c := sd.conn(client)
			if !readOnly {
				var err error
				if raw != nil {
					_, err = c.c.Write(raw)
				} else {
					err = c.send(args)
				}
				if err != nil {
					got[i] = "<closed>"
					continue
				}
			}
			if noRead {
				// Wait until the server reports the client blocked.
				deadline := time.Now().Add(5 * time.Second)
				for sd.blockedClients() <= before[i] {
					if time.Now().After(deadline) {
						t.Fatalf("%s line %d %q: client never blocked", sd.name, lineNo, line)
					}
					time.Sleep(time.Millisecond)
				}
				continue
			}
			b, err := c.readReply(5 * time.Second)
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					got[i] = fmt.Sprintf("<timeout> %q", b)
				} else if len(b) == 0 {
					// A write to a socket the server has closed fails only once the peer's
					// reset has come back, so the same close shows as a failed write or as an
					// empty read depending on timing: both are "<closed>".
					got[i] = "<closed>"
				} else {
					got[i] = fmt.Sprintf("<closed> %q", b)
				}
				continue
			}
			got[i] = sd.norm.apply(b, allInts)
		}
		if !noRead && got[0] != got[1] {
			t.Errorf("line %d %q:\n  redis:  %q\n  qbench: %q", lineNo, line, got[0], got[1])
		}
	}
	for i, line := range script {
		step(i+1, line)
	}
	for client := 0; client < 16; client++ {
		if used[client] {
			step(0, fmt.Sprintf("@%d PING", client))
		}
	}
}
