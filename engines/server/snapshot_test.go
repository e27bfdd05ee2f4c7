package server

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"qbench/engines/server/fsys"
)

// holdSyncs makes fsyncs of files whose name contains substr wait until release is closed;
// reached is closed when the first one starts.
func holdSyncs(sim *fsys.Sim, substr string) (reached, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	sim.SyncHook = func(name string) {
		if strings.Contains(name, substr) {
			once.Do(func() { close(reached) })
			<-release
		}
	}
	return reached, release
}

// TestBgsaveDoesNotStopTheServer: while a BGSAVE's file is being written and fsynced, the server
// answers reads and writes; the snapshot holds the dataset as of BGSAVE.
func TestBgsaveDoesNotStopTheServer(t *testing.T) {
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	s := startServer(t, Config{FS: sim, Dir: "/d"})
	c := mustPDial(t, s.Addr())
	for i := 0; i < 100; i++ {
		c.mustDo(t, "XADD", "s", "*", "i", fmt.Sprint(i))
	}
	before := c.mustDo(t, "LASTSAVE").(int64)
	reached, release := holdSyncs(sim, "dump.qdb")
	if v := c.mustDo(t, "BGSAVE"); v != "Background saving started" {
		t.Fatalf("BGSAVE = %v", v)
	}
	<-reached
	// The snapshot's fsync is held: the server still serves.
	c.mustDo(t, "XADD", "s", "*", "during", "save")
	if n := c.mustDo(t, "XLEN", "s"); n != int64(101) {
		t.Fatalf("XLEN during BGSAVE = %v", n)
	}
	if info := c.mustDo(t, "INFO", "persistence").(string); !strings.Contains(info, "rdb_bgsave_in_progress:1") {
		t.Fatalf("INFO during BGSAVE:\n%s", info)
	}
	if v, _ := c.do("BGSAVE"); v != replyErr("ERR Background save already in progress") {
		t.Fatalf("second BGSAVE = %v", v)
	}
	close(release)
	s.p.waitBackground()
	if after := c.mustDo(t, "LASTSAVE").(int64); after < before {
		t.Fatalf("LASTSAVE went from %d to %d", before, after)
	}
	info := c.mustDo(t, "INFO", "persistence").(string)
	for _, want := range []string{"rdb_bgsave_in_progress:0", "rdb_last_bgsave_status:ok", "rdb_saves:1", "rdb_changes_since_last_save:1"} {
		if !strings.Contains(info, want+"\r\n") {
			t.Errorf("INFO after BGSAVE lacks %s:\n%s", want, info)
		}
	}
	s2 := restart(t, s)
	if n := mustPDial(t, s2.Addr()).mustDo(t, "XLEN", "s"); n != int64(100) {
		t.Fatalf("XLEN from the snapshot = %v, want the 100 entries at BGSAVE", n)
	}
}

// TestSaveRules: a "save <seconds> <changes>" rule whose time has come triggers a snapshot.
func TestSaveRules(t *testing.T) {
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	s := startServer(t, Config{FS: sim, Dir: "/d", Save: "1 2"})
	c := mustPDial(t, s.Addr())
	c.mustDo(t, "SET", "a", "1")
	c.mustDo(t, "SET", "b", "2")
	s.mu.Lock()
	s.p.lastSave = s.p.lastSave.Add(-2 * time.Second) // as if a second had passed
	s.mu.Unlock()
	// The cron checks the rules every 100 ms.
	for i := 0; ; i++ {
		if strings.Contains(c.mustDo(t, "INFO", "persistence").(string), "rdb_saves:1\r\n") {
			break
		}
		if i == 500 {
			t.Fatal("the save rule never fired")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.p.waitBackground()
	s2 := restart(t, s)
	if v := mustPDial(t, s2.Addr()).mustDo(t, "GET", "b"); v != "2" {
		t.Fatalf("GET b from the snapshot = %v", v)
	}
}

// TestRewriteSurvivesPowerLoss: BGREWRITEAOF while writes continue, then a power cut at a
// random point of the rewrite: every write acknowledged under always is recovered, and after a
// completed rewrite only the new base and incremental file remain.
func TestRewriteSurvivesPowerLoss(t *testing.T) {
	for seed := uint64(0); seed < 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			sim := fsys.NewSim()
			sim.MkdirAll("/d")
			cfg := Config{FS: sim, Dir: "/d", AppendOnly: true, AppendFsync: "always"}
			s := New(cfg)
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			c := mustPDial(t, s.Addr())
			n := 0
			for ; n < 50; n++ {
				c.mustDo(t, "RPUSH", "l", fmt.Sprint(n))
			}
			reached, release := holdSyncs(sim, "base")
			c.mustDo(t, "BGREWRITEAOF")
			<-reached
			for ; n < 80; n++ {
				c.mustDo(t, "RPUSH", "l", fmt.Sprint(n))
			}
			rng := rand.New(rand.NewPCG(seed, 7))
			if rng.IntN(2) == 0 {
				close(release) // let the rewrite finish (or not) while the crash happens
				s.Crash()
			} else {
				go func() { s.Crash() }()
				time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
				close(release)
				s.p.waitBackground()
			}
			s.Close()
			sim.PowerLoss(rng.IntN(2) == 0, rng)
			s2 := New(cfg)
			if err := s2.Start(); err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if got := mustPDial(t, s2.Addr()).mustDo(t, "LLEN", "l"); got != int64(n) {
				t.Fatalf("LLEN after a power cut during the rewrite = %v, want %d", got, n)
			}
		})
	}
	// A rewrite that completes leaves one base and one incremental file.
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	s := startServer(t, Config{FS: sim, Dir: "/d", AppendOnly: true, AppendFsync: "everysec"})
	c := mustPDial(t, s.Addr())
	c.mustDo(t, "RPUSH", "l", "a")
	c.mustDo(t, "BGREWRITEAOF")
	s.p.waitBackground()
	c.mustDo(t, "BGREWRITEAOF")
	s.p.waitBackground()
	names, _ := sim.ReadDir("/d/appendonlydir")
	if fmt.Sprint(names) != "[appendonly.aof.3.base.qaof appendonly.aof.3.incr.qaof appendonly.aof.manifest]" {
		t.Fatalf("files after two rewrites: %v", names)
	}
	info := c.mustDo(t, "INFO", "persistence").(string)
	if !strings.Contains(info, "aof_rewrites:2\r\n") || !strings.Contains(info, "aof_last_bgrewrite_status:ok\r\n") {
		t.Fatalf("INFO after rewrites:\n%s", info)
	}
}

// TestBackgroundJobsQueue: one background job at a time, with Redis's replies; a scheduled job
// starts when the running one completes.
func TestBackgroundJobsQueue(t *testing.T) {
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	s := startServer(t, Config{FS: sim, Dir: "/d", AppendOnly: true})
	c := mustPDial(t, s.Addr())
	c.mustDo(t, "SET", "k", "v")
	reached, release := holdSyncs(sim, "base")
	if v := c.mustDo(t, "BGREWRITEAOF"); v != "Background append only file rewriting started" {
		t.Fatalf("BGREWRITEAOF = %v", v)
	}
	<-reached
	steps := []struct {
		cmd  []string
		want any
	}{
		{[]string{"BGREWRITEAOF"}, replyErr("ERR Background append only file rewriting already in progress")},
		{[]string{"BGSAVE"}, replyErr("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")},
		{[]string{"BGSAVE", "SCHEDULE"}, "Background saving scheduled"},
	}
	for _, st := range steps {
		if v, err := c.do(st.cmd...); err != nil || v != st.want {
			t.Fatalf("%v = %v, %v; want %q", st.cmd, v, err, st.want)
		}
	}
	close(release)
	s.p.waitBackground()
	info := c.mustDo(t, "INFO", "persistence").(string)
	for _, want := range []string{"aof_rewrites:1", "rdb_saves:1", "rdb_bgsave_in_progress:0", "aof_rewrite_in_progress:0"} {
		if !strings.Contains(info, want+"\r\n") {
			t.Errorf("INFO lacks %s:\n%s", want, info)
		}
	}
}

// TestAutoRewrite: once the log has grown by auto-aof-rewrite-percentage over its base (and is at
// least auto-aof-rewrite-min-size), the cron rewrites it.
func TestAutoRewrite(t *testing.T) {
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	s := startServer(t, Config{FS: sim, Dir: "/d", AppendOnly: true})
	c := mustPDial(t, s.Addr())
	c.mustDo(t, "CONFIG", "SET", "auto-aof-rewrite-min-size", "4kb")
	for i := 0; i < 200; i++ {
		c.mustDo(t, "SET", "k", strings.Repeat("x", 50)) // one key, a growing log
	}
	// The cron looks every 100 ms.
	for i := 0; !strings.Contains(c.mustDo(t, "INFO", "persistence").(string), "aof_rewrites:1\r\n"); i++ {
		if i == 500 {
			t.Fatal("no automatic rewrite")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.p.waitBackground()
	info := c.mustDo(t, "INFO", "persistence").(string)
	if !strings.Contains(info, "aof_base_size:") || strings.Contains(info, "aof_base_size:0\r\n") {
		t.Fatalf("no base after the rewrite:\n%s", info)
	}
	s2 := restart(t, s)
	if v := mustPDial(t, s2.Addr()).mustDo(t, "GET", "k"); v != strings.Repeat("x", 50) {
		t.Fatalf("GET k = %v", v)
	}
}
