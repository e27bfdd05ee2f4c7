package redisq

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// A server that exits on its own is reported with its exit status and last log lines; a kill is
// not a death; the death outlives the kill that clears the process away and the restart after.
// SHUTDOWN NOSAVE stands in for Redis's exit on a disk error (status 0 rather than 1).
func TestDeathReported(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs redis-server")
		}
		t.Skip("needs redis-server")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) (engines.Engine, string)
		words string // in the dead server's last log lines
	}{
		{"redis", func(t *testing.T) (engines.Engine, string) {
			m, err := StartRedis(ctx, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Stop() })
			return &managedEngine{server: m}, m.Addr()
		}, "Redis is now ready to exit, bye bye..."},
		{"server", func(t *testing.T) (engines.Engine, string) {
			c, err := startChildServer(ctx, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.stop() })
			return &childEngine{child: c}, c.addr
		}, "SHUTDOWN requested by client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, addr := tc.start(t)
			dr := e.(engines.DeathReporter)
			cr := e.(engines.Crasher)
			if _, died := dr.Died(); died {
				t.Fatal("a running server reported dead")
			}
			// A fault's kill is not a death.
			if err := cr.Crash(ctx, engines.ProcessCrash); err != nil {
				t.Fatal(err)
			}
			if _, died := dr.Died(); died {
				t.Fatal("a server killed by a fault reported dead")
			}
			if err := cr.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer c.Close()
			c.Do(ctx, "SHUTDOWN", "NOSAVE") // no reply: the connection closes
			var d engines.Death
			deadline := time.Now().Add(10 * time.Second)
			for died := false; !died; d, died = dr.Died() {
				if time.Now().After(deadline) {
					t.Fatal("the server's own exit was not reported")
				}
				time.Sleep(5 * time.Millisecond) // polling the child's exit
			}
			if d.Status != "exit status 0" || d.At.IsZero() || !d.Down || !slices.ContainsFunc(d.Log, func(l string) bool { return strings.Contains(l, tc.words) }) {
				t.Fatalf("death %+v: want exit status 0, a time, and %q in the log lines", d, tc.words)
			}
			// A supervisor's restart: the kill clears the dead process away, the death stays.
			if err := cr.Crash(ctx, engines.ProcessCrash); err != nil {
				t.Fatal(err)
			}
			if err := cr.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			if again, died := dr.Died(); !died || again.Status != d.Status || !again.At.Equal(d.At) || again.Down {
				t.Fatalf("after the restart: %+v, %t; want the first death %+v, no longer down", again, died, d)
			}
		})
	}
}
