package server

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// statsLines are INFO commandstats, errorstats and total_error_replies with the timings cut
// (usec, usec_per_call), sorted, for comparing with redis-server's.
func statsLines(t *testing.T, c *rawConn) string {
	t.Helper()
	if err := c.send(splitArgs([]string{"INFO", "everything"})); err != nil {
		t.Fatal(err)
	}
	b, err := c.readReply(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	usec := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)
	var out []string
	for _, l := range strings.Split(string(b), "\r\n") {
		if strings.HasPrefix(l, "cmdstat_info:") {
			continue // the polls for blocked clients: as many as it took
		}
		if strings.HasPrefix(l, "cmdstat_") || strings.HasPrefix(l, "errorstat_") || strings.HasPrefix(l, "total_error_replies:") {
			out = append(out, usec.ReplaceAllString(l, ""))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestDiffRedisCommandStats: INFO commandstats and errorstats count as redis-server's do.
// The first case is Redis 7.0.15's own "XGROUP DESTROY should unblock XREADGROUP with
// -NOGROUP" (stream-cgroups.tcl): the blocked XREADGROUP counts one call, failed, when the
// -NOGROUP error answers it, and that error counts once. The others: refused, failed and
// served commands, errors inside EXEC, an aborted EXEC, a timed-out BLPOP.
func TestDiffRedisCommandStats(t *testing.T) {
	cases := []struct {
		name  string
		steps []string // "cmd": a reply is read; "&cmd": sent by client 2, which is then waited for to block, read at "<"; "~cmd": the same, not waited for (it times out at once)
	}{
		{"xgroup-destroy-unblocks", []string{"CONFIG RESETSTAT", "DEL mystream", "XGROUP CREATE mystream mygroup $ MKSTREAM",
			"&XREADGROUP GROUP mygroup Alice BLOCK 0 STREAMS mystream >", "XGROUP DESTROY mystream mygroup", "<"}},
		{"errors", []string{"CONFIG RESETSTAT", "SET s x", "LPUSH s a", "GET", "NOSUCHCOMMAND x", "XGROUP NOSUCH",
			"INCR s", "XADD x 0-0 f v", "GET s"}},
		{"multi-exec", []string{"CONFIG RESETSTAT", "SET s x", "MULTI", "INCR s", "GET s", "LPUSH s a", "EXEC",
			"MULTI", "GET", "SET a b", "EXEC", "EXEC", "DISCARD"}},
		{"blocking", []string{"CONFIG RESETSTAT", "&BLPOP l 0", "RPUSH l a", "<", "~BLPOP l 0.01", "<",
			"&BLMPOP 0 1 l LEFT COUNT 2", "RPUSH l b c d", "<", "BLPOP l 0"}},
	}
	s := startServer(t, Config{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]string
			for i, addr := range []string{startOwnRealRedis(t), s.Addr()} {
				c1, c2 := dialRaw(t, addr), dialRaw(t, addr)
				for _, st := range tc.steps {
					c := c1
					switch {
					case st == "<":
						if _, err := c2.readReply(5 * time.Second); err != nil {
							t.Fatal(err)
						}
						continue
					case strings.HasPrefix(st, "&"), strings.HasPrefix(st, "~"):
						if err := c2.send(splitWords(st[1:])); err != nil {
							t.Fatal(err)
						}
						if st[0] == '&' {
							waitBlockedRaw(t, c1, 1)
						}
						continue
					}
					if err := c.send(splitWords(st)); err != nil {
						t.Fatal(err)
					}
					if _, err := c.readReply(5 * time.Second); err != nil {
						t.Fatal(err)
					}
				}
				waitBlockedRaw(t, c1, 0)
				got[i] = statsLines(t, c1)
			}
			if got[0] != got[1] {
				t.Fatalf("stats differ:\nredis-server:\n%s\nqbench:\n%s", got[0], got[1])
			}
		})
	}
}

// waitBlockedRaw polls INFO clients until blocked_clients is n (a blocking command sent by
// another connection has no reply to wait for).
func waitBlockedRaw(t *testing.T, c *rawConn, n int) {
	t.Helper()
	want := "blocked_clients:" + string(rune('0'+n)) + "\r\n"
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.send(splitArgs([]string{"INFO", "clients"}))
		b, err := c.readReply(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("blocked_clients never %d: %s", n, b)
		}
		time.Sleep(time.Millisecond)
	}
}
