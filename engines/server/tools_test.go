package server

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// lookTool finds a Redis command-line tool; missing tools skip the test unless CI=true.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found and CI=true: %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

func hostPort(t *testing.T, addr string) (string, string) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// TestRedisBenchmark runs redis-benchmark unchanged against the server.
func TestRedisBenchmark(t *testing.T) {
	bin := lookTool(t, "redis-benchmark")
	s := startServer(t, Config{})
	h, p := hostPort(t, s.Addr())
	runs := []struct {
		name string
		args []string
		want []string
	}{
		{"lpush-rpop", []string{"-c", "10", "-n", "5000", "-d", "256", "-t", "lpush,rpop"}, []string{"LPUSH:", "RPOP:"}},
		{"lpush-rpop-pipelined", []string{"-c", "10", "-n", "5000", "-d", "256", "-t", "lpush,rpop", "-P", "16"}, []string{"LPUSH:", "RPOP:"}},
		{"xadd", []string{"-c", "10", "-n", "5000", "XADD", "bench", "*", "f", "v"}, []string{"XADD bench * f v:"}},
		{"zadd-zpopmin", []string{"-c", "10", "-n", "2000", "-t", "zadd,zpopmin"}, []string{"ZADD:", "ZPOPMIN:"}}, // sorted sets: its default list stopped there
		{"xadd-pipelined", []string{"-c", "10", "-n", "5000", "-P", "16", "XADD", "bench", "*", "f", "v"}, []string{"XADD bench * f v:"}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			args := append([]string{"-h", h, "-p", p, "-q"}, r.args...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("redis-benchmark %v: %v\n%s", args, err, out)
			}
			// -q prints progress with \r; the final line per test has "requests per second".
			text := strings.ReplaceAll(string(out), "\r", "\n")
			for _, w := range r.want {
				found := false
				for _, line := range strings.Split(text, "\n") {
					if strings.HasPrefix(strings.TrimSpace(line), w) && strings.Contains(line, "requests per second") {
						found = true
					}
				}
				if !found {
					t.Fatalf("no %q result in output:\n%s", w, text)
				}
			}
			if strings.Contains(text, "ERR") || strings.Contains(text, "WARNING") {
				t.Fatalf("redis-benchmark reported a problem:\n%s", text)
			}
		})
	}
	rdb := newClient(t, s, 2)
	// With -P, redis-benchmark may send a few requests past -n to fill its pipelines.
	if n, err := rdb.XLen(t.Context(), "bench").Result(); err != nil || n < 10000 || n > 10000+10*16 {
		t.Fatalf("XLEN bench = %d, %v; want about 10000", n, err)
	}
}

// TestRedisCLI runs redis-cli unchanged: one-shot commands and commands on stdin.
func TestRedisCLI(t *testing.T) {
	bin := lookTool(t, "redis-cli")
	s := startServer(t, Config{})
	h, p := hostPort(t, s.Addr())
	cli := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-h", h, "-p", p}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tests := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"PING"}, "PONG\n"},
		{"", []string{"RPUSH", "l", "a", "b"}, "2\n"},
		{"", []string{"LRANGE", "l", "0", "-1"}, "a\nb\n"},
		{"", []string{"--no-raw", "LRANGE", "l", "0", "-1"}, "1) \"a\"\n2) \"b\"\n"},
		{"", []string{"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}, "OK\n"},
		{"", []string{"XADD", "s", "1-1", "f", "v"}, "1-1\n"},
		{"", []string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}, "s\n1-1\nf\nv\n"},
		{"", []string{"NOSUCH"}, "ERR unknown command 'NOSUCH', with args beginning with: \n"},
		{"SET k v\nGET k\nLLEN l\n", nil, "OK\nv\n2\n"},
		{"", []string{"-3", "HELLO", "3"}, ""},
		{"", []string{"INFO", "server"}, "redis_version:7.0.15"},
	}
	for _, tc := range tests {
		got := cli(tc.stdin, tc.args...)
		if !strings.Contains(got, tc.want) {
			t.Errorf("redis-cli %q (stdin %q) = %q, want %q", tc.args, tc.stdin, got, tc.want)
		}
	}
}
