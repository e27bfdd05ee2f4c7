package server

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
)

// persistence is the server's durability: the append-only log (aof.Writer, one record per
// write command as executed, group-committed at each connection's batch boundary) and
// snapshots. The policy is decided in one place, commit (persist_log.go): a reply waits until
// its batch's records are written (everysec, no) or written and fsynced (always).
//
// Every command runs with the clock frozen at its start (store.Now), and that time is logged
// with it, so replay recomputes exactly what the command did: the ID XADD * chose, the
// delivery time XREADGROUP recorded, the expiry EXPIRE set.
//
// Its state is grouped by job: cmdClock (persist_log.go), saveState and rewriteState
// (persist_background.go), loadStats (persist_load.go). The embedded structs keep one field
// name for each value.
type persistence struct {
	s  *Server
	fs fsys.FS

	// Guarded by the store lock.
	dir      string
	prefix   string
	policy   aof.Policy
	interval time.Duration // everysec period (tests shorten it)
	layout   *aof.Layout
	w        *aof.Writer // nil when appendonly is no
	killed   bool        // Crash: no more writes, background results are dropped
	cmdClock
	saveState
	rewriteState
	loadStats
	cronStats

	pauseUsec int64 // the last snapshot's pause of the server (latest_fork_usec's role)
	// forkFails (DEBUG FORK-FAIL 1) makes every background job fail to start, as Redis's do
	// when fork() fails (persist_forkfail.go).
	forkFails bool

	bg sync.WaitGroup // BGSAVE and BGREWRITEAOF goroutines
	// done receives a background job's completion, which the cron runs under the store lock (as
	// Redis handles a finished child in serverCron): until then the job counts as in progress.
	done chan func()
}

// cmdClock is the running command's frozen time and, inside EXEC, the records it collects.
//
// The event loop reads the clock once per turn (startTurn) and every command of the turn runs
// at that time, as Redis's commands run at its cached server.mstime: each command of the turn
// was received before that reading and is answered after it, so no client can tell it from a
// server that ran them all in that instant. A command served on a goroutine reads its own time
// while the loop does not hold the lock, and the loop reads again whenever it takes the lock
// back, so the time commands see never goes back.
type cmdClock struct {
	clock    func() time.Time
	cmdTime  time.Time
	turnTime time.Time // the event loop's turn is running: its commands' time
	inTurn   bool
	depth    int // nesting of running commands (EXEC runs commands inside a command)
	inExec   bool
	multi    [][]byte // payloads of the records of the running EXEC
}

// saveState is the save rules and the state of SAVE and BGSAVE.
type saveState struct {
	rules           []saveRule
	saveStr         string
	lastSave        time.Time
	dirtyAtSave     int64
	bgsave          bool
	bgsaveStart     time.Time
	lastBgsaveOK    bool
	lastBgsaveSec   int64
	saves           int64
	bgsaveScheduled bool
	// lastBgsaveTry is when the last BGSAVE began: after a failed one, the save rules wait
	// bgsaveRetryDelay before trying again, as Redis does.
	lastBgsaveTry time.Time
	// stopWrites is stop-writes-on-bgsave-error.
	stopWrites bool
}

// bgsaveRetryDelay is Redis's CONFIG_BGSAVE_RETRY_DELAY: the save rules retry a failed
// background save after more than this.
const bgsaveRetryDelay = 5 * time.Second

// rewriteState is the state of BGREWRITEAOF and of the automatic rewrite rule.
type rewriteState struct {
	rewrite          bool
	rewriteStart     time.Time
	lastRewriteOK    bool
	lastRewriteSec   int64
	rewrites         int64
	rewriteFailures  int64
	rewriteScheduled bool
	baseSize         int64 // the base file's size, the automatic rule's reference
	autoRewritePct   int64
	autoRewriteMin   int64
}

// loadStats is what loading at start-up did (INFO persistence).
type loadStats struct {
	loadedRecords int64
	loadTime      time.Duration
}

// cronStats is the everysec tick's lateness (the crash tests bound it).
type cronStats struct {
	maxTickGap time.Duration // longest time between two everysec ticks (scheduler lateness)
	lastTickAt time.Time
}

type saveRule struct {
	seconds int64
	changes int64
}

func newPersistence(s *Server) *persistence {
	cfg := &s.cfg
	p := &persistence{
		s: s, fs: cfg.FS, dir: cfg.Dir, prefix: "appendonly.aof", interval: time.Second,
		cmdClock:     cmdClock{clock: s.store.Now},
		saveState:    saveState{lastBgsaveOK: true, lastBgsaveSec: -1},
		rewriteState: rewriteState{lastRewriteOK: true, lastRewriteSec: -1, autoRewritePct: 100, autoRewriteMin: 64 << 20},
		done:         make(chan func(), 4),
	}
	p.policy, _ = aof.ParsePolicy(cfg.AppendFsync)
	p.rules, _ = parseSaveRules(cfg.Save)
	p.saveStr = cfg.Save
	p.stopWrites = cfg.StopWritesOnBgsaveError != "no"
	s.store.Now = func() time.Time {
		if p.depth > 0 {
			return p.cmdTime
		}
		return p.clock()
	}
	return p
}

// persistDefaults fills in the persistence fields of cfg (called by New; the error is kept for Start).
func persistDefaults(cfg *Config) error {
	if cfg.Dir == "" {
		cfg.Dir = "."
	}
	if cfg.AppendFsync == "" {
		cfg.AppendFsync = "everysec"
	}
	if cfg.FS == nil {
		cfg.FS = fsys.OS{}
	}
	if _, ok := aof.ParsePolicy(cfg.AppendFsync); !ok {
		return fmt.Errorf("appendfsync %q: must be always, everysec or no", cfg.AppendFsync)
	}
	if cfg.AOFPreallocate == "" {
		cfg.AOFPreallocate = "yes"
	}
	if cfg.AOFPreallocate != "yes" && cfg.AOFPreallocate != "no" {
		return fmt.Errorf("aof-preallocate %q: must be yes or no", cfg.AOFPreallocate)
	}
	if _, err := parseSaveRules(cfg.Save); err != nil {
		return err
	}
	return nil
}

// parseSaveRules parses Redis's "save" value: "3600 1 300 100", "" for none.
func parseSaveRules(v string) ([]saveRule, error) {
	f := strings.Fields(v)
	if len(f)%2 != 0 {
		return nil, fmt.Errorf("save %q: needs pairs of <seconds> <changes>", v)
	}
	var out []saveRule
	for i := 0; i < len(f); i += 2 {
		sec, err1 := strconv.ParseInt(f[i], 10, 64)
		ch, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 != nil || err2 != nil || sec < 1 || ch < 0 {
			return nil, fmt.Errorf("save %q: invalid pair %s %s", v, f[i], f[i+1])
		}
		out = append(out, saveRule{sec, ch})
	}
	return out, nil
}

func (p *persistence) snapshotPath() string { return filepath.Join(p.dir, "dump.qdb") }

// close makes the log durable and waits for background saves (at Close).
func (p *persistence) close() error {
	p.s.mu.Lock()
	killed := p.killed
	p.s.mu.Unlock()
	if !killed {
		p.waitBackground()
	}
	p.bg.Wait()
	p.s.mu.Lock()
	w, killed := p.w, p.killed // Crash sets killed under the lock, maybe from another goroutine (fatal)
	p.s.mu.Unlock()
	if w == nil || killed {
		return nil
	}
	return w.Close()
}
