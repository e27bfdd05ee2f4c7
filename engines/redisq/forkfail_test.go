package redisq_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/bench"
	"qbench/engines/procs"
	"qbench/engines/redisq"
	"qbench/engines/server"
	"qbench/results"
	"qbench/scenarios"
)

// needForkFailRedis skips (fails under CI=true) where a real redis-server cannot be made to fail
// its fork: no redis-server, or no pids cgroup this process can write.
func needForkFailRedis(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("redis-server")
	if err == nil {
		err = procs.CanLimitTasks()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("fork-failure on redis-server is required under CI=true: %v", err)
		}
		t.Skipf("fork-failure on redis-server cannot run here: %v", err)
	}
}

// misconfBgsave is how Redis 7.0.15's -MISCONF for a failed background save begins.
const misconfBgsave = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."

// The library's fork-failure scenario shows, on real Redis and on the in-repo server, what its
// header promises: a background save that cannot fork, then under stop-writes-on-bgsave-error
// yes writes refused with the save's MISCONF (and nothing else), charged to the fork-failure
// window (and to the BGSAVE ending it, but for the few sent in the milliseconds between the two),
// nothing acknowledged lost, no write acknowledged between the fault's end and the BGSAVE, writes
// back after the BGSAVE;
// under no, not one produce error. Either way the save did fail: the per-second health readings
// saw rdb_last_bgsave_status err.
func TestForkFailureScenario(t *testing.T) {
	file := filepath.Join("..", "..", scenarios.LibraryDir, "failures", "fork-failure.yaml")
	sc, err := scenarios.Load(file, bench.Checks())
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells, want engine server and redis x stop-writes-on-bgsave-error yes and no", len(cells))
	}
	for _, c := range cells {
		t.Run(c.Name, func(t *testing.T) {
			// Two at a time (go test -parallel): the rates leave the CPU mostly idle and the
			// assertions are counts.
			t.Parallel()
			if c.Scenario.Engine == "redis" {
				needForkFailRedis(t)
			}
			ctx := context.Background()
			r, err := bench.Run(ctx, ctx, c.Scenario, bench.Options{Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			results.WriteSummary(&buf, r)
			t.Logf("\n%s", buf.String())
			f, cmd := faultOf(t, r, "fork-failure"), faultOf(t, r, "command")
			var misconf, other int64
			for _, e := range r.Errors {
				if e.Where != "produce" {
					continue
				}
				if strings.Contains(e.Message, misconfBgsave) {
					misconf += e.Count
				} else {
					other += e.Count
				}
			}
			l := r.Summary.Ledger
			t.Logf("produce errors %d (MISCONF %d, other %d), charged to the fork failure %d and to the BGSAVE %d; write back after the BGSAVE %s; lost %d",
				r.Summary.ProduceErrors, misconf, other, f.ProduceErrors, cmd.ProduceErrors, results.FormatNs(cmd.RecoverWriteNs), l.Lost)
			if f.Error != "" || cmd.Error != "" {
				t.Fatalf("fault errors: fork-failure %q, BGSAVE %q", f.Error, cmd.Error)
			}
			if !saveFailed(r) {
				t.Errorf("no health reading saw rdb_last_bgsave_status err: the save never failed")
			}
			if l.Lost != 0 {
				t.Errorf("%d acknowledged messages lost; the server never went down", l.Lost)
			}
			switch stop := c.Scenario.Persistence["stop-writes-on-bgsave-error"]; stop {
			case "yes":
				// Sends intended between the fault's end and the BGSAVE's start (the
				// scheduler's few milliseconds) are refused too and charged to no window, as
				// the loss rule says; at most those, and a batch in flight per producer.
				gap := float64(cmd.StartNs-f.EndNs) / 1e9
				uncharged := r.Summary.ProduceErrors - f.ProduceErrors - cmd.ProduceErrors
				bound := int64(gap*r.Summary.OfferedRate) + int64(2*c.Scenario.Producers*c.Scenario.Batch)
				if misconf == 0 || other != 0 || f.ProduceErrors == 0 || uncharged < 0 || uncharged > bound || cmd.RecoverWriteNs < 0 {
					t.Errorf("want writes refused with the failed save's MISCONF only, charged to the fork failure and the BGSAVE that ended it (uncharged %d, at most %d for the %.0f ms between them), and back after the BGSAVE; errors %+v",
						uncharged, bound, gap*1000, r.Errors)
				}
				// A fork that works again lets no write in: only the save does.
				if f.RecoverWriteNs < 0 || f.EndNs+f.RecoverWriteNs < cmd.StartNs {
					t.Errorf("a write was acknowledged %s after the fault ended, before the BGSAVE at %s: the failed save's refusal ended without a save",
						results.FormatNs(f.RecoverWriteNs), results.FormatNs(cmd.StartNs-f.EndNs))
				}
			case "no":
				if r.Summary.ProduceErrors != 0 || l.Failed != 0 {
					t.Errorf("stop-writes-on-bgsave-error no: %d produce errors (%+v), want none", r.Summary.ProduceErrors, r.Errors)
				}
			default:
				t.Fatalf("cell %s: stop-writes-on-bgsave-error %q", c.Name, stop)
			}
		})
	}
}

func faultOf(t *testing.T, r *results.Result, kind string) results.FaultWindow {
	t.Helper()
	for _, f := range r.Faults {
		if f.Kind == kind {
			return f
		}
	}
	t.Fatalf("no %s fault window in %+v", kind, r.Faults)
	return results.FaultWindow{}
}

// saveFailed: the per-second health readings saw rdb_last_bgsave_status err.
func saveFailed(r *results.Result) bool {
	rows, _ := results.HealthSummary(r)
	for _, row := range rows {
		if row.Name == "rdb_last_bgsave_status" {
			return slices.Contains(row.StatusesSeen, "err")
		}
	}
	return false
}

// forkFailInfo are the INFO persistence fields a failed fork sets or leaves, compared between
// the servers.
var forkFailInfo = []string{"rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec",
	"rdb_current_bgsave_time_sec", "aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled", "aof_last_rewrite_time_sec",
	"aof_current_rewrite_time_sec", "aof_last_bgrewrite_status", "aof_rewrites_consecutive_failures", "aof_last_write_status"}

// TestDiffForkFailure: while its fork fails, redis-server (really failing: held in a pids cgroup)
// and the in-repo server (DEBUG FORK-FAIL 1) give the same replies to BGSAVE, BGSAVE SCHEDULE,
// BGREWRITEAOF, writes, PING, reads and SAVE, and the same INFO persistence fields; both log
// Redis's "Can't save in background: fork: <strerror>" and "Can't rewrite append only file in
// background: fork: <strerror>" once per failed fork (EAGAIN on redis-server here, ENOMEM on
// ours). Once the fork works again a BGSAVE succeeds and lets writes in.
func TestDiffForkFailure(t *testing.T) {
	needForkFailRedis(t)
	ctx := context.Background()
	real, err := redisq.StartRedis(ctx, "", map[string]string{"save": "1000 1000"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { real.Stop() })
	var ourLog logLines
	ours := server.New(server.Config{Dir: t.TempDir(), Save: "1000 1000", EnableDebugCommand: "local", Logf: ourLog.logf})
	if err := ours.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ours.Close() })

	sides := []struct {
		name     string
		addr     string
		forkFail func(bool) error
		log      func() string
	}{
		{"redis", real.Addr(), real.ForkFail, func() string { return redisLog(t, real) }},
		{"qbench", ours.Addr(), nil, ourLog.String},
	}
	replies := map[string][]string{}
	for _, side := range sides {
		c := redis.NewClient(&redis.Options{Addr: side.addr, Protocol: 2, MaxRetries: -1})
		defer c.Close()
		forkFail := side.forkFail
		if forkFail == nil {
			forkFail = func(on bool) error {
				return c.Do(ctx, "DEBUG", "FORK-FAIL", map[bool]string{true: "1", false: "0"}[on]).Err()
			}
		}
		do := func(args ...any) string {
			t.Helper()
			v, err := c.Do(ctx, args...).Result()
			words := make([]string, len(args))
			for i, a := range args {
				words[i] = fmt.Sprint(a)
			}
			out := strings.Join(words, " ") + " -> "
			if err != nil {
				out += "error " + err.Error()
			} else {
				out += fmt.Sprint(v)
			}
			replies[side.name] = append(replies[side.name], out)
			return out
		}
		info := func() {
			t.Helper()
			s, err := c.Info(ctx, "persistence").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range forkFailInfo {
				v := redisq.InfoField(s, f)
				if strings.HasSuffix(f, "_time_sec") && (v == "0" || v == "1") {
					// Whole seconds between the save's start and end clocks: a save of a few
					// milliseconds reads 1 when it crosses a second. -1 (none) is compared.
					v = "0 or 1"
				}
				replies[side.name] = append(replies[side.name], f+":"+v)
			}
		}
		waitSave := func() {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
				s, err := c.Info(ctx, "persistence").Result()
				if err != nil {
					t.Fatal(err)
				}
				if redisq.InfoField(s, "rdb_bgsave_in_progress") == "0" {
					return
				}
				time.Sleep(10 * time.Millisecond) // the save runs in a child (Redis) or goroutine
			}
			t.Fatalf("%s: the background save did not end", side.name)
		}
		do("SET", "k", "v")
		if err := forkFail(true); err != nil {
			t.Fatalf("%s: %v", side.name, err)
		}
		do("BGSAVE")
		info()
		do("SET", "k2", "v")
		do("PING")
		do("GET", "k")
		do("BGSAVE", "SCHEDULE")
		do("BGREWRITEAOF")
		info()
		do("CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
		do("SET", "k3", "v")
		do("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
		do("SAVE") // no fork: it succeeds, and clears the failed status
		do("SET", "k4", "v")
		info()
		do("BGSAVE")
		do("INCR", "n")
		if err := forkFail(false); err != nil {
			t.Fatalf("%s: %v", side.name, err)
		}
		do("BGSAVE")
		waitSave()
		info()
		do("SET", "k5", "v")
		do("DBSIZE")
		log := side.log()
		for _, l := range strings.Split(log, "\n") {
			if i := strings.Index(l, "Can't "); i >= 0 && strings.Contains(l, "fork: ") {
				t.Logf("%s's log: %s", side.name, strings.TrimSpace(l))
				// One line per failed fork, the same on both sides (not the strerror).
				replies[side.name] = append(replies[side.name], "log: "+l[i:strings.Index(l, "fork: ")])
			}
		}
		for _, want := range []string{"Can't save in background: fork: ", "Can't rewrite append only file in background: fork: "} {
			if !strings.Contains(log, want) {
				t.Errorf("%s's log has no %q:\n%s", side.name, want, log)
			}
		}
		if side.name == "qbench" && !strings.Contains(log, "Can't save in background: fork: Cannot allocate memory") {
			t.Errorf("the in-repo server's log does not say ENOMEM:\n%s", log)
		}
	}
	want, got := replies["redis"], replies["qbench"]
	t.Logf("redis-server, its fork failing:\n%s", strings.Join(want, "\n"))
	if len(want) != len(got) {
		t.Fatalf("%d replies from redis, %d from qbench", len(want), len(got))
	}
	misconf := 0
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("reply %d:\n redis:  %q\n qbench: %q", i, want[i], got[i])
		}
		if strings.Contains(want[i], misconfBgsave) {
			misconf++
		}
	}
	// The case must show what it is about: the failed fork's refusals (SET, PING, and INCR
	// after the second failed BGSAVE).
	if misconf != 3 {
		t.Errorf("%d MISCONF replies, want 3:\n%s", misconf, strings.Join(want, "\n"))
	}
	if !slices.Contains(want, "rdb_last_bgsave_status:err") {
		t.Errorf("redis-server never reported rdb_last_bgsave_status:err: its fork did not fail\n%s", strings.Join(want, "\n"))
	}
}

// redisLog is the managed redis-server's output so far.
func redisLog(t *testing.T, m *redisq.ManagedRedis) string {
	t.Helper()
	return m.LogTail(64 << 10)
}

// logLines collects a server's log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
