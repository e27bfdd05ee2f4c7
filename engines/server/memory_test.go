package server

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"qbench/engines/server/resp"
)

// childServerEnv makes the test binary run a bare server (see TestMain), so its RSS can be
// measured apart from the test process.
const childServerEnv = "QBENCH_SERVER_CHILD"

// runChildServer serves until stdin closes; it prints the address on stdout.
func runChildServer() {
	cfg := Config{}
	hog := os.Getenv(childHogEnv) != ""
	if hog {
		cfg.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	}
	s := New(cfg)
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if hog {
		hogFDs(5)
	}
	fmt.Println(s.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n')
	s.Close()
	os.Exit(0)
}

func startChildServer(t testing.TB) (addr string, pid int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childServerEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child server: %v", err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid
}

func rssOf(t testing.TB, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no VmRSS")
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n * 1024
}

// xaddMany sends n three-field XADDs, pipelined in batches.
func xaddMany(t testing.TB, addr string, n int) {
	c := dialRaw(t, addr)
	const batch = 1000
	payload := strings.Repeat("x", 32)
	for i := 0; i < n; i += batch {
		var b []byte
		for j := i; j < i+batch && j < n; j++ {
			args := []string{"XADD", "mem", "*", "producer", "p" + strconv.Itoa(j%8), "seq", strconv.Itoa(j), "payload", payload}
			b = resp.AppendArrayLen(b, len(args))
			for _, a := range args {
				b = resp.AppendBulkString(b, a)
			}
		}
		if _, err := c.c.Write(b); err != nil {
			t.Fatal(err)
		}
		for j := i; j < i+batch && j < n; j++ {
			if _, err := c.readReply(30 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func infoField(t testing.TB, addr, field string) int64 {
	c := dialRaw(t, addr)
	c.send([][]byte{[]byte("INFO"), []byte("memory")})
	b, err := c.readReply(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(field + `:(\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in INFO", field)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// TestMemoryVsRedis: the server's RSS after 1,000,000 three-field XADDs must be within 1.5x
// of redis-server's used_memory for the same. It takes a while: set QBENCH_MEMTEST=1.
func TestMemoryVsRedis(t *testing.T) {
	if os.Getenv("QBENCH_MEMTEST") != "1" {
		t.Skip("set QBENCH_MEMTEST=1 to run (about 20s)")
	}
	const n = 1000000
	realAddr := startOwnRealRedis(t)
	ourAddr, pid := startChildServer(t)
	xaddMany(t, realAddr, n)
	xaddMany(t, ourAddr, n)
	used := infoField(t, realAddr, "used_memory")
	rss := rssOf(t, pid)
	ratio := float64(rss) / float64(used)
	t.Logf("redis used_memory %d (%.1f MB), qbench RSS %d (%.1f MB), ratio %.2f", used, float64(used)/1e6, rss, float64(rss)/1e6, ratio)
	if ratio > 1.5 {
		t.Fatalf("RSS is %.2fx Redis's used_memory, want at most 1.5x", ratio)
	}
}
