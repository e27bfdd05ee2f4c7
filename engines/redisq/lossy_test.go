package redisq

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

func TestLossyRedisCrash(t *testing.T) {
	_, errFuse := exec.LookPath("fusermount3")
	_, errDev := os.Stat("/dev/fuse")
	_, errRedis := exec.LookPath("redis-server")
	if os.Geteuid() != 0 || errFuse != nil || errDev != nil || errRedis != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root, /dev/fuse, fusermount3 (fuse3) and redis-server")
		}
		t.Skip("needs root, /dev/fuse, fusermount3 (fuse3) and redis-server")
	}
	cases := []struct {
		appendfsync string
		kind        engines.CrashKind
		wantLoss    bool
	}{
		{"always", engines.PowerLoss, false},
		{"everysec", engines.PowerLoss, true},
		{"everysec", engines.ProcessCrash, false},
	}
	for _, c := range cases {
		t.Run(c.appendfsync+"/"+string(c.kind), func(t *testing.T) {
			ctx := context.Background()
			l, err := StartLossyRedis(ctx, map[string]string{"appendonly": "yes", "appendfsync": c.appendfsync})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := l.Stop(); err != nil {
					t.Error(err)
				}
			})
			client := redis.NewClient(&redis.Options{Addr: l.Addr(), MaxRetries: -1})
			const n = 300
			for i := range n {
				if err := client.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"n", i}}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			client.Close()
			if err := l.Crash(ctx, c.kind); err != nil {
				t.Fatal(err)
			}
			if err := l.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			client = redis.NewClient(&redis.Options{Addr: l.Addr(), MaxRetries: -1})
			defer client.Close()
			kept, err := client.XLen(ctx, "s").Result()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d of %d acknowledged entries kept", kept, n)
			if lost := kept < n; lost != c.wantLoss {
				t.Fatalf("%d of %d kept; want loss: %t", kept, n, c.wantLoss)
			}
		})
	}
}

// The mount must not be the child's working directory (see StartLossyRedis): a child that changes
// into a FUSE mount served by its own parent before exec can deadlock with the parent's GC.
func TestLossyRedisChildStartsOutsideTheMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		t.Skip("needs fusermount3")
	}
	l, err := StartLossyRedis(context.Background(), map[string]string{"appendonly": "yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	if l.cmd.Dir == l.FS.Mountpoint() {
		t.Fatalf("redis-server's working directory at exec is the mount %s", l.cmd.Dir)
	}
	c := redis.NewClient(&redis.Options{Addr: l.Addr()})
	defer c.Close()
	dir, err := c.ConfigGet(context.Background(), "dir").Result()
	if err != nil {
		t.Fatal(err)
	}
	if dir["dir"] != l.FS.Mountpoint() {
		t.Fatalf("redis dir %q, want the mount %s", dir["dir"], l.FS.Mountpoint())
	}
}
