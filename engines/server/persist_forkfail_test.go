package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Under DEBUG FORK-FAIL 1 a background save and a log rewrite fail where Redis's fork would:
// Redis's replies, log lines (ENOMEM), status fields and, for the save under
// stop-writes-on-bgsave-error yes with save rules set, -MISCONF for writes and PING until a save
// succeeds. A scheduled rewrite stays scheduled while the fork fails and runs once it works.
// TestDiffForkFailure (engines/redisq) compares the replies with a redis-server whose fork
// really fails.
func TestForkFailure(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	s := startServer(t, Config{Save: "1000 1000", AppendOnly: true, EnableDebugCommand: "local", Logf: func(f string, a ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	logged := func(line string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range logs {
			if l == line {
				return true
			}
		}
		return false
	}
	c := mustPDial(t, s.Addr())
	info := func(field string) string {
		t.Helper()
		for _, l := range strings.Split(c.mustDo(t, "INFO", "persistence").(string), "\r\n") {
			if v, ok := strings.CutPrefix(l, field+":"); ok {
				return v
			}
		}
		t.Fatalf("INFO persistence has no %s", field)
		return ""
	}
	want := func(args []string, reply any) {
		t.Helper()
		got, err := c.do(args...)
		if err != nil {
			t.Fatal(err)
		}
		if got != reply {
			t.Fatalf("%v: %#v, want %#v", args, got, reply)
		}
	}
	const rewriteErr = replyErr("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.")

	want([]string{"SET", "k", "v"}, "OK")
	want([]string{"DEBUG", "FORK-FAIL", "2"}, replyErr("ERR DEBUG FORK-FAIL takes 0 or 1"))
	want([]string{"DEBUG", "FORK-FAIL", "1"}, "OK")
	want([]string{"BGSAVE"}, replyErr("ERR"))
	if !logged("Can't save in background: fork: Cannot allocate memory") {
		t.Errorf("no fork failure in the log: %q", logs)
	}
	if st, busy := info("rdb_last_bgsave_status"), info("rdb_bgsave_in_progress"); st != "err" || busy != "0" {
		t.Errorf("after the failed fork: rdb_last_bgsave_status %s, rdb_bgsave_in_progress %s; want err, 0", st, busy)
	}
	want([]string{"SET", "k2", "v"}, replyErr(errBgsaveMisconf))
	want([]string{"PING"}, replyErr(errBgsaveMisconf))
	want([]string{"GET", "k"}, "v")

	want([]string{"BGREWRITEAOF"}, rewriteErr)
	if !logged("Can't rewrite append only file in background: fork: Cannot allocate memory") {
		t.Errorf("no rewrite fork failure in the log: %q", logs)
	}
	if st, busy, fails := info("aof_last_bgrewrite_status"), info("aof_rewrite_in_progress"), info("aof_rewrites_consecutive_failures"); st != "err" || busy != "0" || fails != "0" {
		t.Errorf("after the failed rewrite fork: aof_last_bgrewrite_status %s, aof_rewrite_in_progress %s, aof_rewrites_consecutive_failures %s; want err, 0, 0 (Redis counts only a child's failure)", st, busy, fails)
	}

	// A rewrite scheduled while the fork fails stays scheduled (the cron retries it) and runs
	// once the fork works: scheduled behind a save, completed while the fork is failing.
	want([]string{"DEBUG", "FORK-FAIL", "0"}, "OK")
	want([]string{"SAVE"}, "OK") // clears the failed save: writes are let in again
	want([]string{"SET", "k3", "v"}, "OK")
	s.mu.Lock()
	s.p.forkFails = true
	s.p.rewriteScheduled = true
	s.p.finishBackground() // the cron's turn
	scheduled := s.p.rewriteScheduled
	s.p.forkFails = false
	s.p.finishBackground()
	running := s.p.rewrite
	s.mu.Unlock()
	if !scheduled || !running {
		t.Errorf("scheduled rewrite: still scheduled after a failed fork %v (want true), running once the fork works %v (want true)", scheduled, running)
	}
	s.p.waitBackground()
	if st := info("aof_last_bgrewrite_status"); st != "ok" {
		t.Errorf("after a rewrite that could fork: aof_last_bgrewrite_status %s", st)
	}
	want([]string{"BGSAVE"}, "Background saving started")
	s.p.waitBackground()
	if st := info("rdb_last_bgsave_status"); st != "ok" {
		t.Errorf("after a save that could fork: rdb_last_bgsave_status %s", st)
	}
	want([]string{"SET", "k4", "v"}, "OK")
}

// A save's seconds in INFO are Redis's time(NULL) - start: whole seconds of the wall clock, so a
// save of a few milliseconds that crosses a second reads 1, and one of 999 ms within a second 0.
func TestSaveSecondsAreWallClockSeconds(t *testing.T) {
	cases := []struct {
		start, end time.Time
		want       int64
	}{
		{time.Unix(100, 999_000_000), time.Unix(101, 5_000_000), 1},
		{time.Unix(100, 0), time.Unix(100, 999_000_000), 0},
		{time.Unix(100, 500_000_000), time.Unix(102, 400_000_000), 2},
	}
	for _, c := range cases {
		if got := wholeSeconds(c.start, c.end); got != c.want {
			t.Errorf("from %s to %s: %d, want %d", c.start.Format(time.StampMilli), c.end.Format(time.StampMilli), got, c.want)
		}
	}
}
