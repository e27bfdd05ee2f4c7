package sentinelq

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines/redisq"
)

// needSentinel skips a test that needs redis-server and redis-sentinel where they are missing,
// and fails it under CI=true, where .ci/test installs them.
func needSentinel(t *testing.T) {
	t.Helper()
	_, err := redisq.RedisServerPath()
	if err == nil {
		_, err = SentinelPath()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-sentinel is required under CI=true: %v", err)
		}
		t.Skip(err)
	}
}

// The topology starts with the replicas online and the Sentinels agreed, names the primary by
// the proxy's address (which clients map to the primary's own), takes writes under
// min-replicas-to-write 1, and stops every process and removes every directory it made.
func TestTopologyStartStop(t *testing.T) {
	needSentinel(t)
	ctx := context.Background()
	topo, err := startTopology(ctx, map[string]string{"min-replicas-to-write": "1"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			topo.stop()
		}
	}()
	a, err := topo.masterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a != topo.proxy.addr() || topo.realAddr(a) != topo.primary.Addr() {
		t.Fatalf("the Sentinels name %s (proxy %s), mapped to %s; want the primary %s", a, topo.proxy.addr(), topo.realAddr(a), topo.primary.Addr())
	}
	c := redis.NewClient(&redis.Options{Addr: topo.primary.Addr()})
	err = c.Set(ctx, "k", "v", 0).Err()
	c.Close()
	if err != nil {
		t.Fatalf("a write under min-replicas-to-write 1 with 2 replicas online: %v", err)
	}
	pids := topo.pids()
	if len(pids) != 1+2+sentinels {
		t.Fatalf("%d processes, want %d", len(pids), 1+2+sentinels)
	}
	dirs := []string{topo.primary.Dir}
	for _, r := range topo.replicas {
		dirs = append(dirs, r.Dir)
	}
	for _, w := range topo.watchers {
		dirs = append(dirs, w.dir)
	}
	stopped = true
	if err := topo.stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still there after stop (kill 0: %v)", pid, err)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after stop (%v)", d, err)
		}
	}
}

// A held proxy forwards nothing either way and closes nothing: an open connection's bytes and a
// connection made during the hold wait, and both go through at the release.
func TestProxyHoldIsABlackHole(t *testing.T) {
	echo, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	p, err := newProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	p.start(echo.Addr().String())
	dial := func() net.Conn {
		c, err := net.Dial("tcp4", p.addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// roundTrip writes b and reads it back within d; the error says why not.
	roundTrip := func(c net.Conn, b string, d time.Duration) error {
		if _, err := c.Write([]byte(b)); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(d))
		got := make([]byte, len(b))
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if string(got) != b {
			return errors.New("echoed " + string(got))
		}
		return nil
	}
	open := dial()
	if err := roundTrip(open, "a", 5*time.Second); err != nil {
		t.Fatalf("before the hold: %v", err)
	}
	p.holdAll()
	if err := roundTrip(open, "b", 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("an open connection during the hold: %v; want nothing back (a deadline, not a close)", err)
	}
	late := dial()
	if err := roundTrip(late, "c", 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection made during the hold: %v; want nothing back", err)
	}
	p.release()
	for _, tc := range []struct {
		name string
		c    net.Conn
		want string
	}{{"open", open, "b"}, {"late", late, "c"}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			got := make([]byte, 1)
			if _, err := io.ReadFull(tc.c, got); err != nil || string(got) != tc.want {
				t.Fatalf("after the release: %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
