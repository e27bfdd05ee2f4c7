package redisq

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// A stall on redis-url is CLIENT PAUSE ALL on a real redis-server: another client's command
// waits out the pause, the facts say how the stall was made; a server whose user may neither
// pause clients nor DEBUG (enable-debug-command no, an ACL without client|pause) refuses the
// run before it starts, naming both refusals and the server's version.
func TestRedisURLStallByClientPause(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	srv, err := StartRedis(ctx, t.TempDir(), map[string]string{"enable-debug-command": "no"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer admin.Close()
	if err := admin.Do(ctx, "ACL", "SETUSER", "nopause", "on", ">pw", "~*", "&*", "+@all", "-client|pause", "-debug").Err(); err != nil {
		t.Fatal(err)
	}
	reg, err := engines.Lookup("redis-url")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, address string
		wantErr       string // "" for a stall that works
	}{
		{"default user", srv.Addr(), ""},
		{"user without client pause or debug", "redis://nopause:pw@" + srv.Addr(),
			"a stall needs CLIENT PAUSE <ms> ALL (Redis 6.2 or later, a user allowed +client|pause) or DEBUG SLEEP (enable-debug-command); the server at " + srv.Addr() + " (redis_version 7.0.15) refused both: CLIENT PAUSE 0 ALL: NOPERM"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := engines.Spec{RunID: "pause", Design: "stream", Producers: 1, Consumers: 1, Address: c.address, Faults: []string{"stall"}}
			e, err := reg.New(ctx, spec)
			if c.wantErr != "" {
				if err == nil {
					e.Close()
					t.Fatal("a server that can neither pause nor sleep was accepted for a stall")
				}
				t.Log(err)
				if !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "DEBUG SLEEP 0: ") {
					t.Fatalf("error %q, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got := e.(engines.FactReporter).Facts(ctx).Settings["stall_by"]; got != stallClientPause {
				t.Errorf("stall_by %q, want %q", got, stallClientPause)
			}
			const pause = 300 * time.Millisecond
			start := time.Now()
			if err := e.(engines.Staller).Stall(ctx, pause); err != nil {
				t.Fatal(err)
			}
			if err := admin.Set(ctx, "qbench:pause:probe", "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			// The write waited out the pause (Redis's timer granularity: allow a little less).
			if waited := time.Since(start); waited < pause-20*time.Millisecond {
				t.Errorf("a write during the pause answered after %s, want about %s", waited, pause)
			}
			admin.Del(ctx, "qbench:pause:probe")
		})
	}
}
