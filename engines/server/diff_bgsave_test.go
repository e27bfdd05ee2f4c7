package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiffRedisBgsaveError: a background save that fails (its directory removed under it) makes
// redis-server and this server refuse writes and PING with Redis's -MISCONF while save rules
// are set and stop-writes-on-bgsave-error is yes, and keep taking them with no; reads go on
// either way; clearing the save rules, or a save that succeeds, lets writes in again. Every
// reply is compared byte for byte.
func TestDiffRedisBgsaveError(t *testing.T) {
	for _, stop := range []string{"yes", "no"} {
		t.Run("stop-writes-"+stop, func(t *testing.T) {
			replies := map[string][]string{}
			// CONFIG SET dir is a protected config in Redis 7.0.
			s := startServer(t, Config{EnableProtectedConfigs: "yes"})
			for _, side := range []struct{ name, addr string }{{"redis", startOwnRealRedis(t, "--enable-protected-configs", "yes")}, {"qbench", s.Addr()}} {
				c := dialRaw(t, side.addr)
				var dir string
				do := func(args ...string) string {
					t.Helper()
					if err := c.send(splitArgs(args)); err != nil {
						t.Fatal(err)
					}
					b, err := c.readReply(5 * time.Second)
					if err != nil {
						t.Fatalf("%s %v: %v", side.name, args, err)
					}
					cmd := strings.Join(args, " ")
					if dir != "" {
						cmd = strings.ReplaceAll(cmd, dir, "DIR") // each side has a directory of its own
					}
					replies[side.name] = append(replies[side.name], cmd+" -> "+string(b))
					return string(b)
				}
				// waitSave polls INFO persistence until the background save is over and returns
				// its status line.
				waitSave := func() string {
					t.Helper()
					deadline := time.Now().Add(10 * time.Second)
					for time.Now().Before(deadline) {
						if err := c.send(splitArgs([]string{"INFO", "persistence"})); err != nil {
							t.Fatal(err)
						}
						b, err := c.readReply(5 * time.Second)
						if err != nil {
							t.Fatal(err)
						}
						info := string(b)
						if strings.Contains(info, "rdb_bgsave_in_progress:0") {
							for _, l := range strings.Split(info, "\r\n") {
								if strings.HasPrefix(l, "rdb_last_bgsave_status:") {
									return l
								}
							}
						}
						time.Sleep(10 * time.Millisecond) // the save runs in a child (Redis) or goroutine
					}
					t.Fatalf("%s: the background save did not end", side.name)
					return ""
				}
				sub := filepath.Join(t.TempDir(), "dump")
				dir = sub
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				do("CONFIG", "SET", "save", "1000 1000")
				do("CONFIG", "SET", "stop-writes-on-bgsave-error", stop)
				do("CONFIG", "GET", "stop-writes-on-bgsave-error")
				do("CONFIG", "SET", "dir", sub)
				do("SET", "k", "v")
				if err := os.RemoveAll(sub); err != nil {
					t.Fatal(err)
				}
				do("BGSAVE")
				if st := waitSave(); st != "rdb_last_bgsave_status:err" {
					t.Fatalf("%s: after a BGSAVE into a removed directory: %s", side.name, st)
				}
				do("SET", "k2", "v")
				do("PING")
				do("INCR", "n")
				do("GET", "k")
				do("CONFIG", "SET", "save", "") // no save rules: writes are not refused
				do("SET", "k3", "v")
				do("CONFIG", "SET", "save", "1000 1000")
				do("SET", "k4", "v")
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				do("CONFIG", "SET", "dir", sub) // Redis's working directory is still the removed one
				do("BGSAVE")
				if st := waitSave(); st != "rdb_last_bgsave_status:ok" {
					t.Fatalf("%s: after a BGSAVE that could succeed: %s", side.name, st)
				}
				do("SET", "k5", "v")
				do("CONFIG", "SET", "stop-writes-on-bgsave-error", "maybe")
			}
			want, got := replies["redis"], replies["qbench"]
			if len(want) != len(got) {
				t.Fatalf("%d replies from redis, %d from qbench", len(want), len(got))
			}
			misconf := 0
			for i := range want {
				if want[i] != got[i] {
					t.Errorf("reply %d:\n redis:  %q\n qbench: %q", i, want[i], got[i])
				}
				if strings.Contains(want[i], "-MISCONF Redis is configured to save RDB snapshots") {
					misconf++
				}
			}
			// The case must show what it is about: refusals under yes, none under no.
			if wantMisconf := map[string]int{"yes": 4, "no": 0}[stop]; misconf != wantMisconf {
				t.Errorf("stop-writes-on-bgsave-error %s: %d MISCONF replies, want %d (SET, PING, INCR, SET after the rules came back):\n%s", stop, misconf, wantMisconf, strings.Join(want, "\n"))
			}
		})
	}
}
