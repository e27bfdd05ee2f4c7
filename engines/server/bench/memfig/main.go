// Command memfig runs one memory case of issue 35 against a running server (the in-repo one or
// redis-server) and prints the server's peak RSS during the case's operation, in MB, and a
// second figure the case is known by, on one line:
//
//	<peak RSS MB> <also>
//
// The peak is the kernel's high-water mark of the server's resident set (VmHWM in
// /proc/PID/status), reset after the case's data is loaded (clear_refs 5), so it covers the
// operation, not the load. memfig.sh starts a fresh server per case and prints both servers'
// figures side by side. Raw RESP on one connection per role: the client parses nothing it need
// not, so its own cost stays out of the way (it is another process anyway).
//
// Usage: memfig -addr 127.0.0.1:PORT -pid PID -case NAME (cases: memfig -list).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

type memCase struct {
	name, what string
	run        func(e *env) (also string, err error)
}

var cases = []memCase{
	{"set150-del", "SET of a 150 MB value; also: RSS 10 s after a DEL of it (idle)", caseSetDel},
	{"append100", "20 APPENDs of 10 B to a 100 MB string; also: their time, and the peak over the RSS the SET left", caseAppend},
	{"xrange500k", "XRANGE - + over 500 k entries (one 16 B field); also: reply time", caseXrange},
	{"lrange4m", "LRANGE 0 -1 over 4 M elements of 15 B; also: reply time", caseLrange},
	{"xreadgroup1m", "XREADGROUP > of 1 M entries into one consumer's PEL; also: reply time", caseXreadgroup},
	{"pubsub57", "57 MB burst (912 PUBLISH of 64 KB) to a subscriber that does not read; also: the publisher's max PUBLISH latency, subscriber dropped?", casePubsub},
	{"hrandfield", "HRANDFIELD h -1000000 on a two-field hash; also: peak RSS growth over the loaded server", caseHrandfield},
	{"stream1m-small", "1 M XADDs of three fields (30 B of values), pipelined; also: used_memory after the load and 3 s later", caseSmallStream},
}

type env struct {
	addr string
	pid  int
	peak int64 // set by a case whose peak is read before its end; else VmHWM at the end
}

func main() {
	addr := flag.String("addr", "", "server address host:port")
	pid := flag.Int("pid", 0, "server process ID (for /proc/PID/status)")
	name := flag.String("case", "", "case to run")
	list := flag.Bool("list", false, "list the cases and exit")
	flag.Parse()
	if *list {
		for _, c := range cases {
			fmt.Printf("%s\t%s\n", c.name, c.what)
		}
		return
	}
	var mc *memCase
	for i := range cases {
		if cases[i].name == *name {
			mc = &cases[i]
		}
	}
	if mc == nil || *addr == "" || *pid <= 0 {
		fmt.Fprintln(os.Stderr, "usage: memfig -addr host:port -pid PID -case NAME (memfig -list)")
		os.Exit(2)
	}
	e := &env{addr: *addr, pid: *pid}
	also, err := mc.run(e)
	if err != nil {
		fmt.Fprintf(os.Stderr, "memfig %s: %v\n", mc.name, err)
		os.Exit(1)
	}
	peak := e.peak
	if peak == 0 {
		if peak, err = e.status("VmHWM"); err != nil {
			fmt.Fprintf(os.Stderr, "memfig %s: %v\n", mc.name, err)
			os.Exit(1)
		}
	}
	fmt.Printf("%.1f %s\n", mb(peak), also)
}

// status reads a kB field of /proc/PID/status, in bytes.
func (e *env) status(field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, e.pid)
}

// resetPeak starts the high-water mark afresh (clear_refs 5: owner or root).
func (e *env) resetPeak() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", e.pid), []byte("5"), 0)
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// conn is a raw RESP connection.
type conn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func (e *env) dial() (*conn, error) {
	nc, err := net.Dial("tcp", e.addr)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 1<<16), bw: bufio.NewWriterSize(nc, 1<<16)}, nil
}

// send buffers one command; flush sends what is buffered.
func (c *conn) send(args ...string) {
	fmt.Fprintf(c.bw, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.bw, "$%d\r\n", len(a))
		c.bw.WriteString(a)
		c.bw.WriteString("\r\n")
	}
}

func (c *conn) flush() error { return c.bw.Flush() }

// do sends one command and reads its reply, discarding it (a simple or integer reply is returned).
func (c *conn) do(args ...string) (string, error) {
	c.send(args...)
	if err := c.flush(); err != nil {
		return "", err
	}
	return c.skip()
}

// skip reads one reply and discards it; an error reply is an error, a simple string, integer or
// bulk of up to 1 KB is returned.
func (c *conn) skip() (string, error) {
	line, err := c.br.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 {
		return "", fmt.Errorf("short line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '-':
		return "", errors.New(body)
	case '+', ':', '_', ',', '#':
		return body, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return "", err
		}
		if n <= 1024 {
			b := make([]byte, n+2)
			_, err := io.ReadFull(c.br, b)
			return string(b[:n]), err
		}
		_, err = c.br.Discard(n + 2)
		return "", err
	case '*', '>', '~', '%':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", err
		}
		if line[0] == '%' {
			n *= 2
		}
		for range max(n, 0) {
			if _, err := c.skip(); err != nil {
				return "", err
			}
		}
		return "", nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// pipeline sends n commands made by gen in batches and reads every reply.
func (c *conn) pipeline(n int, gen func(i int) []string) error {
	const batch = 1000
	for i := 0; i < n; i += batch {
		k := min(batch, n-i)
		for j := range k {
			c.send(gen(i + j)...)
		}
		if err := c.flush(); err != nil {
			return err
		}
		for range k {
			if _, err := c.skip(); err != nil {
				return err
			}
		}
	}
	return nil
}

// timed runs one command, reading its reply, and returns how long that took.
func (c *conn) timed(args ...string) (time.Duration, error) {
	t0 := time.Now()
	_, err := c.do(args...)
	return time.Since(t0), err
}

// usedMemory is INFO memory's used_memory, in bytes.
func (c *conn) usedMemory() (int64, error) {
	c.send("INFO", "memory")
	if err := c.flush(); err != nil {
		return 0, err
	}
	line, err := c.br.ReadString('\n')
	if err != nil || len(line) < 3 || line[0] != '$' {
		return 0, fmt.Errorf("INFO: %q %v", line, err)
	}
	n, _ := strconv.Atoi(line[1 : len(line)-2])
	b := make([]byte, n+2)
	if _, err := io.ReadFull(c.br, b); err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("no used_memory in INFO memory")
}

func (e *env) dialReset() (*conn, error) {
	c, err := e.dial()
	if err != nil {
		return nil, err
	}
	return c, e.resetPeak()
}

func caseSetDel(e *env) (string, error) {
	c, err := e.dialReset()
	if err != nil {
		return "", err
	}
	if _, err := c.do("SET", "k", strings.Repeat("v", 150<<20)); err != nil {
		return "", err
	}
	peak, err := e.status("VmHWM") // the SET's peak, before the DEL and the idle wait
	if err != nil {
		return "", err
	}
	e.peak = peak
	if _, err := c.do("DEL", "k"); err != nil {
		return "", err
	}
	// Ours returns freed pages after 1 s idle, at most every 5 s (memory_release.go): one
	// may have fired while the SET's bytes were arriving.
	time.Sleep(10 * time.Second)
	rss, err := e.status("VmRSS")
	return fmt.Sprintf("RSS 10 s after DEL %.1f MB", mb(rss)), err
}

func caseAppend(e *env) (string, error) {
	c, err := e.dial()
	if err != nil {
		return "", err
	}
	if _, err := c.do("SET", "k", strings.Repeat("v", 100<<20)); err != nil {
		return "", err
	}
	before, err := e.status("VmRSS") // the SET's leftovers included: ours holds its garbage
	if err != nil {
		return "", err
	}
	if err := e.resetPeak(); err != nil {
		return "", err
	}
	t0 := time.Now()
	for range 20 {
		if _, err := c.do("APPEND", "k", "0123456789"); err != nil {
			return "", err
		}
	}
	d := time.Since(t0)
	peak, err := e.status("VmHWM")
	return fmt.Sprintf("%.0f ms, peak +%.1f MB over the RSS after the SET", d.Seconds()*1000, mb(peak-before)), err
}

func entryID(i int) string { return strconv.Itoa(i+1) + "-1" }

func loadStream(c *conn, n int) error {
	return c.pipeline(n, func(i int) []string {
		return []string{"XADD", "s", entryID(i), "field", "value-0123456789"}
	})
}

func caseXrange(e *env) (string, error) {
	c, err := e.dial()
	if err != nil {
		return "", err
	}
	if err := loadStream(c, 500000); err != nil {
		return "", err
	}
	if err := e.resetPeak(); err != nil {
		return "", err
	}
	d, err := c.timed("XRANGE", "s", "-", "+")
	return fmt.Sprintf("%.0f ms", d.Seconds()*1000), err
}

func caseLrange(e *env) (string, error) {
	c, err := e.dial()
	if err != nil {
		return "", err
	}
	err = c.pipeline(4000, func(i int) []string {
		args := []string{"RPUSH", "l"}
		for j := range 1000 {
			args = append(args, fmt.Sprintf("element-%07d", (i*1000+j)%10000000))
		}
		return args
	})
	if err != nil {
		return "", err
	}
	if err := e.resetPeak(); err != nil {
		return "", err
	}
	d, err := c.timed("LRANGE", "l", "0", "-1")
	return fmt.Sprintf("%.0f ms", d.Seconds()*1000), err
}

func caseXreadgroup(e *env) (string, error) {
	c, err := e.dial()
	if err != nil {
		return "", err
	}
	if err := loadStream(c, 1000000); err != nil {
		return "", err
	}
	if _, err := c.do("XGROUP", "CREATE", "s", "g", "0"); err != nil {
		return "", err
	}
	if err := e.resetPeak(); err != nil {
		return "", err
	}
	d, err := c.timed("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
	return fmt.Sprintf("%.0f ms", d.Seconds()*1000), err
}

func casePubsub(e *env) (string, error) {
	sub, err := e.dial()
	if err != nil {
		return "", err
	}
	defer sub.nc.Close()
	if _, err := sub.do("SUBSCRIBE", "ch"); err != nil {
		return "", err
	}
	pub, err := e.dialReset()
	if err != nil {
		return "", err
	}
	msg := strings.Repeat("m", 64<<10)
	var worst time.Duration
	for range 912 { // 57 MB
		d, err := pub.timed("PUBLISH", "ch", msg)
		if err != nil {
			return "", err
		}
		worst = max(worst, d)
	}
	// The subscriber reads now: all 912 messages, or the end of a connection the server closed
	// for its output buffer limit.
	got := 0
	sub.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	for ; got < 912; got++ {
		if _, err := sub.skip(); err != nil {
			break
		}
	}
	dropped := "no"
	if got < 912 {
		dropped = fmt.Sprintf("yes, after %d", got)
	}
	return fmt.Sprintf("max PUBLISH %.1f ms; dropped: %s", worst.Seconds()*1000, dropped), nil
}

func caseHrandfield(e *env) (string, error) {
	c, err := e.dial()
	if err != nil {
		return "", err
	}
	if _, err := c.do("HSET", "h", "f1", "v1", "f2", "v2"); err != nil {
		return "", err
	}
	before, err := e.status("VmRSS")
	if err != nil {
		return "", err
	}
	if err := e.resetPeak(); err != nil {
		return "", err
	}
	if _, err := c.do("HRANDFIELD", "h", "-1000000"); err != nil {
		return "", err
	}
	peak, err := e.status("VmHWM")
	return fmt.Sprintf("+%.1f MB", mb(peak-before)), err
}

func caseSmallStream(e *env) (string, error) {
	c, err := e.dialReset()
	if err != nil {
		return "", err
	}
	err = c.pipeline(1000000, func(i int) []string {
		v := fmt.Sprintf("%010d", i)
		return []string{"XADD", "s", "*", "user", v, "action", v, "item", v}
	})
	if err != nil {
		return "", err
	}
	u0, err := c.usedMemory()
	if err != nil {
		return "", err
	}
	time.Sleep(3 * time.Second)
	u1, err := c.usedMemory()
	return fmt.Sprintf("used_memory %.1f MB, %.1f MB 3 s later", mb(u0), mb(u1)), err
}
