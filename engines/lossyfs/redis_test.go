package lossyfs

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Real redis-server with its append-only file on the mount: acknowledged XADDs at a steady rate,
// SIGKILL, optionally a power cut, restart on the same directory, and count what is gone.
//
// Expected: a process kill loses nothing under any policy (the writes are in the page cache, here
// in lossyfs's memory, which survives the process). With a cut, appendfsync always loses nothing,
// everysec loses the last second or so, and no loses everything since the start.
func TestRedisPowerLoss(t *testing.T) {
	requireRedis(t)
	const (
		rate     = 1000 // acknowledged writes per second
		duration = 2 * time.Second
	)
	cases := []struct {
		appendfsync string
		cut         bool
		check       func(lost int) string // "" when fine
	}{
		{"always", true, exactlyZero},
		{"always", false, exactlyZero},
		{"everysec", true, func(lost int) string {
			if lost == 0 || lost > 2*rate { // at most ~2 s of writes (everysec may postpone a late fsync)
				return fmt.Sprintf("want more than 0 and at most %d (2 s of writes)", 2*rate)
			}
			return ""
		}},
		{"everysec", false, exactlyZero},
		{"no", false, exactlyZero},
		{"no", true, func(lost int) string {
			if lost < int(duration.Seconds()*rate)/2 {
				return "want most writes lost"
			}
			return ""
		}},
	}
	for _, c := range cases {
		name := c.appendfsync + "/kill"
		if c.cut {
			name += "+cut"
		}
		t.Run(name, func(t *testing.T) {
			f, _, mnt := mountT(t, Options{NoBackingSync: true})
			ctx := context.Background()
			r := startRedis(t, mnt, c.appendfsync)
			acked := writeSteadily(t, ctx, r.addr, rate, duration)
			r.kill(t)
			if c.cut {
				f.Cut()
				f.Recover()
			}
			r = startRedis(t, mnt, c.appendfsync)
			lost := countLost(t, ctx, r.addr, acked)
			t.Logf("appendfsync %s, kill%s: %d acknowledged, %d lost (%.2f s of writes)",
				c.appendfsync, map[bool]string{true: " + cut", false: " only"}[c.cut], len(acked), lost, float64(lost)/rate)
			if msg := c.check(lost); msg != "" {
				t.Errorf("%d of %d acknowledged writes lost: %s", lost, len(acked), msg)
			}
		})
	}
}

func exactlyZero(lost int) string {
	if lost != 0 {
		return "want 0"
	}
	return ""
}

type redisProc struct {
	cmd  *exec.Cmd
	addr string
	out  *strings.Builder
}

func startRedis(t testing.TB, dir, appendfsync string) *redisProc {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	out := &strings.Builder{}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--appendonly", "yes", "--appendfsync", appendfsync, "--save", "",
		"--daemonize", "no", "--logfile", "")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &redisProc{cmd: cmd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: out}
	t.Cleanup(func() { r.kill(t) })
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := c.Ping(context.Background()).Err(); err == nil {
			return r
		} else if time.Now().After(deadline) {
			t.Fatalf("redis-server did not come up: %v\n%s", err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL to this redis-server (by its PID) and reaps it.
func (r *redisProc) kill(t testing.TB) {
	if r.cmd.ProcessState != nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

// writeSteadily sends one XADD at a time at the given rate, each at its scheduled time, and returns
// the sequence numbers Redis acknowledged.
func writeSteadily(t *testing.T, ctx context.Context, addr string, rate int, d time.Duration) []int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	n := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	acked := make([]int, 0, n)
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"n", i}}).Err()
		if err != nil {
			t.Fatalf("XADD %d: %v", i, err)
		}
		acked = append(acked, i)
	}
	return acked
}

func countLost(t *testing.T, ctx context.Context, addr string, acked []int) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	entries, err := c.XRange(ctx, "s", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	present := make(map[int]bool, len(entries))
	for _, e := range entries {
		n, _ := strconv.Atoi(fmt.Sprint(e.Values["n"]))
		present[n] = true
	}
	lost := 0
	for _, n := range acked {
		if !present[n] {
			lost++
		}
	}
	return lost
}

func requireRedis(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server not found")
		}
		t.Skip("redis-server not found")
	}
}

// BenchmarkRedisXAdd is what running Redis on lossyfs costs: XADD round trips with the
// append-only file on the backing file system directly and on the mount, one client and 50.
//
//	go test -run '^$' -bench RedisXAdd -benchtime 20000x ./engines/lossyfs
func BenchmarkRedisXAdd(b *testing.B) {
	requireRedis(b)
	for _, appendfsync := range []string{"always", "everysec"} {
		for _, target := range []string{"backing", "lossyfs"} {
			for _, clients := range []int{1, 50} {
				b.Run(fmt.Sprintf("%s/%s/clients=%d", appendfsync, target, clients), func(b *testing.B) {
					dir := b.TempDir()
					if target == "lossyfs" {
						_, _, dir = mountT(b, Options{})
					}
					r := startRedis(b, dir, appendfsync)
					c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1, PoolSize: clients})
					defer c.Close()
					ctx := context.Background()
					b.SetParallelism((clients + 1) / 2) // GOMAXPROCS is 2 here; 1 client runs serially below
					xadd := func() {
						if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"f", "0123456789"}}).Err(); err != nil {
							b.Error(err)
						}
					}
					b.ResetTimer()
					if clients == 1 {
						for b.Loop() {
							xadd()
						}
						return
					}
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							xadd()
						}
					})
				})
			}
		}
	}
}
