package server

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// persistence is the server's durability: the append-only log (aof.Writer, one record per
// write command as executed, group-committed at each connection's batch boundary) and
// snapshots. The policy is decided in one place, Commit: a reply waits until its batch's
// records are written (everysec, no) or written and fsynced (always).
//
// Every command runs with the clock frozen at its start (store.Now), and that time is logged
// with it, so replay recomputes exactly what the command did: the ID XADD * chose, the
// delivery time XREADGROUP recorded, the expiry EXPIRE set.
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
	rules    []saveRule
	saveStr  string
	clock    func() time.Time
	cmdTime  time.Time
	depth    int // nesting of running commands (EXEC runs commands inside a command)
	inExec   bool
	multi    [][]byte // payloads of the records of the running EXEC
	killed   bool

	lastSave        time.Time
	dirtyAtSave     int64
	bgsave          bool
	bgsaveStart     time.Time
	lastBgsaveOK    bool
	lastBgsaveSec   int64
	saves           int64
	rewrite         bool
	rewriteStart    time.Time
	lastRewriteOK   bool
	lastRewriteSec  int64
	rewrites        int64
	rewriteFailures int64
	pauseUsec       int64 // the last snapshot's pause of the server (latest_fork_usec's role)
	baseSize        int64
	loadedRecords   int64
	loadTime        time.Duration
	autoRewritePct  int64
	autoRewriteMin  int64
	maxTickGap      time.Duration // longest time between two everysec ticks (scheduler lateness)
	lastTickAt      time.Time

	bg sync.WaitGroup // BGSAVE and BGREWRITEAOF goroutines
	// done receives a background job's completion, which the cron runs under the store lock (as
	// Redis handles a finished child in serverCron): until then the job counts as in progress.
	done             chan func()
	bgsaveScheduled  bool
	rewriteScheduled bool
}

type saveRule struct {
	seconds int64
	changes int64
}

func newPersistence(s *Server) *persistence {
	cfg := &s.cfg
	p := &persistence{
		s: s, fs: cfg.FS, dir: cfg.Dir, prefix: "appendonly.aof", interval: time.Second,
		clock: s.store.Now, lastBgsaveOK: true, lastRewriteOK: true, lastBgsaveSec: -1, lastRewriteSec: -1,
		autoRewritePct: 100, autoRewriteMin: 64 << 20, done: make(chan func(), 4),
	}
	p.policy, _ = aof.ParsePolicy(cfg.AppendFsync)
	p.rules, _ = parseSaveRules(cfg.Save)
	p.saveStr = cfg.Save
	s.store.Now = func() time.Time {
		if p.depth > 0 {
			return p.cmdTime
		}
		return p.clock()
	}
	return p
}

// persistDefaults fills in the persistence fields of cfg (called by New via validate).
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

// load runs at Start, before the listener opens: with appendonly yes it loads the AOF (base,
// then incremental files) and opens the log; otherwise it loads the snapshot, if any.
func (p *persistence) load() error {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p.lastSave = time.Now()
	p.lastTickAt = p.lastSave
	start := time.Now()
	c := &client{s: s, proto: 2, authed: true}
	if !s.cfg.AppendOnly {
		n, err := p.loadSnapshot(c)
		p.loadedRecords, p.loadTime = n, time.Since(start)
		return err
	}
	p.layout = aof.NewLayout(p.fs, p.dir, p.prefix)
	found, err := p.layout.Load()
	if err != nil {
		return err
	}
	if !found {
		// A first start with the AOF on: take over a snapshot if there is one, as the base.
		if _, err := p.loadSnapshot(c); err != nil {
			return err
		}
		return p.startAOFLocked()
	}
	n, warns, err := p.layout.Replay(func(r aof.Record) error { return p.apply(c, r) })
	p.loadedRecords, p.loadTime = n, time.Since(start)
	for _, w := range warns {
		s.logf("%s", w)
	}
	if err != nil {
		s.logf("Fatal error loading the append only file: %v", err)
		return fmt.Errorf("loading the append only file: %w", err)
	}
	s.logf("DB loaded from append only file: %d records in %.3f seconds", n, p.loadTime.Seconds())
	if p.layout.Base != "" {
		p.baseSize, _ = p.fs.Size(p.layout.Path(p.layout.Base))
	}
	// A new incremental file is created (and made durable) before the manifest names it, so
	// every file a manifest lists exists: a missing one is damage, and loading refuses it.
	newIncr := len(p.layout.Incrs) == 0
	if newIncr {
		seq := p.layout.NextSeq()
		p.layout.Incrs, p.layout.IncrSeqs = []string{p.layout.IncrName(seq)}, []int{seq}
	}
	open := p.layout.OpenIncr
	if newIncr {
		open = p.layout.CreateIncr
	}
	f, size, err := open(p.layout.Incrs[len(p.layout.Incrs)-1])
	if err != nil {
		return err
	}
	if newIncr {
		if err := p.layout.Save(); err != nil {
			f.Close()
			return err
		}
	}
	p.w = p.newWriter(f, size)
	return nil
}

func (p *persistence) loadSnapshot(c *client) (int64, error) {
	data, err := p.fs.ReadFile(p.snapshotPath())
	if fsys.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int64
	_, err = aof.Scan(p.snapshotPath(), data, func(_ int64, r aof.Record) error {
		n++
		return p.apply(c, r)
	})
	if err != nil {
		return n, fmt.Errorf("loading the snapshot: %w", err)
	}
	return n, nil
}

// startAOFLocked turns the AOF on: the current dataset becomes a base file, a new incremental
// file is opened and the manifest names both. Store lock held.
func (p *persistence) startAOFLocked() error {
	p.layout = aof.NewLayout(p.fs, p.dir, p.prefix)
	if _, err := p.layout.Load(); err != nil {
		return err
	}
	seq := p.layout.NextSeq()
	if err := p.fs.MkdirAll(p.layout.Dir); err != nil {
		return err
	}
	var base string
	if p.s.totalKeys() > 0 {
		base = p.layout.BaseName(seq)
		data := p.snapshotLocked()
		if err := fsys.WriteFileAtomic(p.fs, p.layout.Path(base), data); err != nil {
			return err
		}
		p.baseSize = int64(len(data))
	}
	incr := p.layout.IncrName(seq)
	f, size, err := p.layout.CreateIncr(incr)
	if err != nil {
		return err
	}
	old := p.layout.Files()
	p.layout.Base, p.layout.BaseSeq = base, seq
	p.layout.Incrs, p.layout.IncrSeqs = []string{incr}, []int{seq}
	if err := p.layout.Save(); err != nil {
		f.Close()
		return err
	}
	p.removeFiles(old)
	p.w = p.newWriter(f, size)
	return nil
}

func (p *persistence) removeFiles(names []string) {
	for _, n := range names {
		if n != p.layout.Base && !contains(p.layout.Incrs, n) {
			p.fs.Remove(p.layout.Path(n))
		}
	}
	p.fs.SyncDir(p.layout.Dir)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// apply replays one record with the clock at the record's time. Store lock held.
func (p *persistence) apply(c *client, r aof.Record) error {
	p.cmdTime = time.UnixMilli(r.TimeMs)
	p.depth++
	defer func() { p.depth-- }()
	if r.DB < 0 || r.DB >= store.NumDBs {
		return fmt.Errorf("record for database %d", r.DB)
	}
	c.db = r.DB
	switch r.Kind {
	case aof.KindKey:
		v, err := store.DecodeDump(r.Args[2])
		if err != nil {
			return fmt.Errorf("key %q: %w", r.Args[0], err)
		}
		v = p.s.reencode(v)
		db := p.s.store.DBs[r.DB]
		db.SetClearTTL(string(r.Args[0]), v)
		if len(r.Args[1]) > 0 {
			at, err := strconv.ParseInt(string(r.Args[1]), 10, 64)
			if err != nil {
				return fmt.Errorf("key %q: bad expiry", r.Args[0])
			}
			db.Expire(string(r.Args[0]), at)
		}
		return nil
	case aof.KindMulti:
		for _, payload := range r.Args {
			sub, err := aof.DecodePayload(payload)
			if err != nil || sub.Kind == aof.KindMulti {
				return fmt.Errorf("transaction record: %v", err)
			}
			if err := p.apply(c, sub); err != nil {
				return err
			}
		}
		return nil
	case aof.KindCommand, aof.KindServed:
		args := r.Args
		if r.Kind == aof.KindServed {
			args = args[1:]
		}
		cmd, err := lookup(args)
		if err != nil {
			return fmt.Errorf("command %q: %v", args[0], err)
		}
		v, _ := cmd.h(c, args)
		if b, ok := v.(*blockSpec); ok && r.Kind == aof.KindServed {
			b.serve(string(r.Args[0]))
		}
		p.s.blocked.ready = p.s.blocked.ready[:0]
		return nil
	}
	return fmt.Errorf("unknown record kind %q", r.Kind)
}

// beginCmd freezes the clock for a command; endCmd releases it. The records an EXEC produces
// are collected and logged as one. Store lock held.
func (p *persistence) beginCmd(cmd *command) {
	if p.depth == 0 {
		p.cmdTime = p.clock()
		p.inExec = cmd.name == "exec"
	}
	p.depth++
}

func (p *persistence) endCmd() {
	p.depth--
	if p.depth > 0 || !p.inExec {
		return
	}
	p.inExec = false
	switch {
	case len(p.multi) == 1:
		r, _ := aof.DecodePayload(p.multi[0])
		p.append(r)
	case len(p.multi) > 1:
		p.append(aof.Record{Kind: aof.KindMulti, TimeMs: p.cmdTime.UnixMilli(), Args: p.multi})
	}
	p.multi = nil
}

// append logs r, or keeps it for the EXEC that is running. Store lock held.
func (p *persistence) append(r aof.Record) {
	if p.w == nil {
		return
	}
	if p.inExec && p.depth > 0 {
		p.multi = append(p.multi, aof.AppendPayload(nil, r))
		return
	}
	p.w.Append(r)
}

// logCommand appends a write command that succeeded to the log. Store lock held.
func (p *persistence) logCommand(db int, args [][]byte) {
	p.append(aof.Record{Kind: aof.KindCommand, DB: db, TimeMs: p.cmdTime.UnixMilli(), Args: args})
}

// logServed appends a blocked command that a write just served. Store lock held.
func (p *persistence) logServed(b *blockSpec, key string) {
	if p.w == nil || b.args == nil {
		return
	}
	args := make([][]byte, 0, len(b.args)+1)
	args = append(append(args, []byte(key)), b.args...)
	p.append(aof.Record{Kind: aof.KindServed, DB: b.db, TimeMs: p.s.store.NowMs(), Args: args})
}

// batchEnd is the log position a reply computed now depends on (0 = nothing to wait for).
// Store lock held.
func (p *persistence) batchEnd() int64 {
	if p.w == nil {
		return 0
	}
	return p.w.End()
}

// commit waits until the log is stored up to end as appendfsync promises, so no reply leaves
// before what it depends on (its batch's writes, or others' writes it read). False means the
// batch's own writes (wrote) could not be stored: its replies must not be sent. A batch that
// wrote nothing still gets its replies (reads and MISCONF errors) when the log is failing.
func (p *persistence) commit(w *aof.Writer, end int64, wrote bool) bool {
	if w == nil || end == 0 {
		return true
	}
	return w.Commit(end) == nil || !wrote
}

// denyWrite is Redis's check before a write command (and PING) while the AOF cannot be
// written: -MISCONF with the system error.
func (p *persistence) denyWrite(cmd *command) error {
	if p.w == nil || (cmd.flags&flagWrite == 0 && cmd.name != "ping") {
		return nil
	}
	if err := p.w.Err(); err != nil {
		return redisError("MISCONF Errors writing to the AOF file: " + strerror(err))
	}
	return nil
}

// strerror renders err as C's strerror would ("No space left on device").
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// snapshotLocked renders the whole keyspace as a snapshot file (magic + one key record per key).
// Store lock held; this is the only part of a snapshot that pauses the server.
func (p *persistence) snapshotLocked() []byte {
	b := []byte(aof.Magic)
	var val []byte
	now := p.s.store.NowMs()
	for i, db := range p.s.store.DBs {
		db.Keys(func(key string, v any) bool {
			var exp []byte
			if at, ok := db.ExpireAt(key); ok {
				if at <= now {
					return true
				}
				exp = strconv.AppendInt(nil, at, 10)
			}
			val = store.AppendDump(val[:0], v)
			b = aof.AppendRecord(b, aof.Record{Kind: aof.KindKey, DB: i, TimeMs: now, Args: [][]byte{[]byte(key), exp, val}})
			return true
		})
	}
	return b
}

// save writes a snapshot; with background set, only the serialisation holds the store lock.
// Store lock held on entry (and on return).
func (p *persistence) save(background bool) error {
	s := p.s
	t0 := time.Now()
	data := p.snapshotLocked()
	p.pauseUsec = time.Since(t0).Microseconds()
	dirty := s.dirty
	path := p.snapshotPath()
	finish := func(err error) {
		if err == nil {
			p.lastSave, p.dirtyAtSave = time.Now(), dirty
			p.saves++
		}
		p.lastBgsaveOK = err == nil
	}
	if !background {
		err := fsys.WriteFileAtomic(p.fs, path, data)
		finish(err)
		return err
	}
	p.bgsave, p.bgsaveStart = true, time.Now()
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		err := fsys.WriteFileAtomic(p.fs, path, data)
		p.done <- func() { p.bgsaveDone(err, finish) }
	}()
	return nil
}

// bgsaveDone completes a BGSAVE. Store lock held.
func (p *persistence) bgsaveDone(err error, finish func(error)) {
	p.bgsave = false
	p.lastBgsaveSec = int64(time.Since(p.bgsaveStart).Seconds())
	if err != nil {
		p.s.logf("Background saving error: %v", err)
	} else {
		p.s.logf("Background saving terminated with success")
	}
	finish(err)
}

// startRewrite is BGREWRITEAOF: under the store lock it serialises the dataset, opens a new
// incremental file for later writes and records it in the manifest; a goroutine writes the
// base; then the cron switches the manifest to the new base and the new incremental file and
// removes the old files. A crash at any point leaves a manifest that loads every acknowledged
// write. With appendonly no it writes a base alone, as Redis does. Store lock held.
func (p *persistence) startRewrite() error {
	t0 := time.Now()
	data := p.snapshotLocked()
	if p.layout == nil || p.w == nil {
		p.layout = aof.NewLayout(p.fs, p.dir, p.prefix)
		if _, err := p.layout.Load(); err != nil {
			return err
		}
	}
	seq := p.layout.NextSeq()
	if p.layout.BaseSeq >= seq {
		seq = p.layout.BaseSeq + 1
	}
	incr := ""
	if p.w != nil {
		incr = p.layout.IncrName(seq)
		f, size, err := p.layout.CreateIncr(incr)
		if err != nil {
			return err
		}
		// The manifest names the new file before any record goes there: if saving it fails (a
		// full disk), the log carries on in the old file, still the last one listed. (Rotating
		// first sent acknowledged writes to a file no manifest listed.) If the rotation fails,
		// the new file listed stays empty, which replays as nothing.
		p.layout.Incrs = append(p.layout.Incrs, incr)
		p.layout.IncrSeqs = append(p.layout.IncrSeqs, seq)
		if err := p.layout.Save(); err != nil {
			p.layout.Incrs = p.layout.Incrs[:len(p.layout.Incrs)-1]
			p.layout.IncrSeqs = p.layout.IncrSeqs[:len(p.layout.IncrSeqs)-1]
			f.Close()
			return err
		}
		old, err := p.w.Rotate(f, size)
		if err != nil {
			f.Close()
			return err
		}
		old.Close()
	} else if err := p.fs.MkdirAll(p.layout.Dir); err != nil {
		return err
	}
	p.pauseUsec = time.Since(t0).Microseconds()
	p.rewrite, p.rewriteStart = true, time.Now()
	base := p.layout.BaseName(seq)
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		err := fsys.WriteFileAtomic(p.fs, p.layout.Path(base), data)
		p.done <- func() { p.rewriteDone(err, base, seq, incr, int64(len(data))) }
	}()
	return nil
}

// rewriteDone completes a BGREWRITEAOF. Store lock held.
func (p *persistence) rewriteDone(err error, base string, seq int, incr string, size int64) {
	s := p.s
	p.rewrite = false
	p.lastRewriteSec = int64(time.Since(p.rewriteStart).Seconds())
	if err == nil && !p.killed {
		old := p.layout.Files()
		p.layout.Base, p.layout.BaseSeq = base, seq
		if incr != "" {
			// Incremental files opened since this rewrite began stay.
			i := indexOf(p.layout.Incrs, incr)
			p.layout.Incrs, p.layout.IncrSeqs = p.layout.Incrs[i:], p.layout.IncrSeqs[i:]
		} else {
			p.layout.Incrs, p.layout.IncrSeqs = nil, nil
		}
		if err = p.layout.Save(); err == nil {
			p.removeFiles(old)
			p.baseSize = size
		}
	}
	p.lastRewriteOK = err == nil
	if err != nil {
		p.rewriteFailures++
		s.logf("Background AOF rewrite failed: %v", err)
	} else {
		p.rewrites++
		p.rewriteFailures = 0
		s.logf("Background AOF rewrite finished successfully")
	}
}

// finishBackground runs the completions of finished background jobs, then any job that was
// scheduled behind them. Store lock held.
func (p *persistence) finishBackground() {
	for {
		select {
		case fn := <-p.done:
			fn()
			continue
		default:
		}
		break
	}
	if p.killed || p.bgsave || p.rewrite {
		return
	}
	if p.rewriteScheduled {
		p.rewriteScheduled = false
		if err := p.startRewrite(); err != nil {
			p.s.logf("scheduled AOF rewrite: %v", err)
		}
	} else if p.bgsaveScheduled {
		p.bgsaveScheduled = false
		p.save(true)
	}
}

// waitBackground waits for running background jobs and completes them (tests, Close).
func (p *persistence) waitBackground() {
	for {
		p.bg.Wait()
		p.s.mu.Lock()
		p.finishBackground()
		busy := p.bgsave || p.rewrite
		p.s.mu.Unlock()
		if !busy {
			return
		}
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return 0
}

// cron is the persistence timer: the everysec fsync and error retry (Writer.Tick), save rules,
// automatic rewrite. It runs in its own goroutine.
func (p *persistence) cron() {
	s := p.s
	defer s.wg.Done()
	t := time.NewTicker(max(p.interval/10, time.Millisecond))
	defer t.Stop()
	lastTick := time.Now()
	for {
		select {
		case <-s.closing:
			return
		case now := <-t.C:
			s.mu.Lock()
			if p.killed {
				s.mu.Unlock()
				return
			}
			p.finishBackground()
			w := p.w
			if !p.bgsave && !p.rewrite {
				for _, r := range p.rules {
					if s.dirty-p.dirtyAtSave >= r.changes && s.dirty > p.dirtyAtSave && now.Sub(p.lastSave) >= time.Duration(r.seconds)*time.Second {
						s.logf("%d changes in %d seconds. Saving...", r.changes, r.seconds)
						p.save(true)
						break
					}
				}
			}
			if w != nil && !p.rewrite && p.autoRewritePct > 0 {
				// Redis's rule: the whole log (base + incremental) has grown by the percentage
				// over the base of the last rewrite, and is at least the minimum size.
				size := p.baseSize + w.Stats().CurrentSize
				if size >= p.autoRewriteMin && (size-p.baseSize)*100 >= max(p.baseSize, 1)*p.autoRewritePct {
					s.logf("Starting automatic rewriting of AOF on %d%% growth", p.autoRewritePct)
					if err := p.startRewrite(); err != nil {
						s.logf("automatic AOF rewrite: %v", err)
					}
				}
			}
			s.mu.Unlock()
			if w != nil && now.Sub(lastTick) >= p.interval {
				s.mu.Lock()
				p.maxTickGap = max(p.maxTickGap, now.Sub(lastTick))
				p.lastTickAt = now
				s.mu.Unlock()
				lastTick = now
				w.Tick(now)
			} else if w != nil && w.Err() != nil {
				w.Retry()
			}
		}
	}
}

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

// Crash simulates a process crash of this server: the log drops what it had not yet written
// (write or fsync calls already under way complete, as they would in the kernel), then the
// listener and every connection close without another byte sent. Replies not yet sent are never
// sent. Whatever reached the file system survives; with a simulated file system, call
// (*fsys.Sim).PowerLoss afterwards to also lose what was not fsynced. Start a new server on the
// same Dir and FS to recover.
func (s *Server) Crash() {
	s.mu.Lock()
	s.p.killed = true
	w := s.p.w
	s.mu.Unlock()
	if w != nil {
		w.Kill()
	}
	s.Close()
	s.p.bg.Wait()
}

// persistConfigGet and persistConfigSet are CONFIG GET/SET of appendonly, appendfsync, save, dir.
func (p *persistence) configGet(name string) (string, bool) {
	switch name {
	case "appendonly":
		return yesNo(p.w != nil), true
	case "appendfsync":
		return p.policy.String(), true
	case "save":
		return p.saveStr, true
	case "dir":
		abs, err := filepath.Abs(p.dir)
		if err != nil {
			return p.dir, true
		}
		return abs, true
	case "auto-aof-rewrite-percentage":
		return strconv.FormatInt(p.autoRewritePct, 10), true
	case "auto-aof-rewrite-min-size":
		return strconv.FormatInt(p.autoRewriteMin, 10), true
	case "aof-load-truncated":
		return "yes", true
	}
	return "", false
}

var persistConfigNames = []string{"appendonly", "appendfsync", "save", "dir", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "aof-load-truncated"}

func (p *persistence) configSet(name, val string) (bool, error) {
	bad := func(reason string) error {
		return errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, reason)
	}
	switch name {
	case "appendonly":
		switch strings.ToLower(val) {
		case "yes":
			if p.w == nil {
				if err := p.startAOFLocked(); err != nil {
					return true, bad(err.Error())
				}
			}
		case "no":
			if p.w != nil {
				p.w.Close()
				p.w = nil
			}
		default:
			return true, bad("argument must be 'yes' or 'no'")
		}
	case "appendfsync":
		pol, ok := aof.ParsePolicy(strings.ToLower(val))
		if !ok {
			return true, bad("argument(s) must be one of the following: always, everysec, no")
		}
		p.policy = pol
		if p.w != nil {
			p.w.SetPolicy(pol)
		}
	case "save":
		r, err := parseSaveRules(val)
		if err != nil {
			return true, bad("Invalid save parameters")
		}
		p.rules, p.saveStr = r, val
	case "dir":
		if err := p.fs.MkdirAll(val); err != nil {
			return true, bad(err.Error())
		}
		p.dir = val
	case "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size":
		n, ok := memToBytes(val)
		if !ok {
			return true, bad("argument couldn't be parsed into an integer")
		}
		if name == "auto-aof-rewrite-percentage" {
			p.autoRewritePct = n
		} else {
			p.autoRewriteMin = n
		}
	case "aof-load-truncated":
		if strings.ToLower(val) != "yes" {
			return true, bad("only 'yes' is supported")
		}
	default:
		return false, nil
	}
	return true, nil
}

// persistCommands are SAVE, BGSAVE, BGREWRITEAOF (LASTSAVE is in cmd_server.go).
var persistCommands = []*command{
	{name: "save", arity: 1, flags: flagAdmin | flagNoScript, group: "server", summary: "Synchronously save the dataset to disk", h: cmdSave},
	{name: "bgsave", arity: -1, flags: flagAdmin | flagNoScript, group: "server", summary: "Asynchronously save the dataset to disk", h: cmdBgsave},
	{name: "bgrewriteaof", arity: 1, flags: flagAdmin | flagNoScript, group: "server", summary: "Asynchronously rewrite the append-only file", h: cmdBgrewriteaof},
}

func cmdSave(c *client, args [][]byte) (any, error) {
	p := c.s.p
	if p.bgsave {
		return nil, redisError("ERR Background save already in progress")
	}
	if err := p.save(false); err != nil {
		return nil, redisError("ERR " + err.Error())
	}
	return resp.OK, nil
}

func cmdBgsave(c *client, args [][]byte) (any, error) {
	p := c.s.p
	if len(args) > 2 || (len(args) == 2 && !eq(args[1], "schedule")) {
		return nil, errSyntax
	}
	switch {
	case p.bgsave:
		return nil, redisError("ERR Background save already in progress")
	case p.rewrite || c.inExec:
		if len(args) == 2 || c.inExec {
			p.bgsaveScheduled = true
			return resp.Simple("Background saving scheduled"), nil
		}
		return nil, redisError("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
	}
	p.save(true)
	return resp.Simple("Background saving started"), nil
}

func cmdBgrewriteaof(c *client, args [][]byte) (any, error) {
	p := c.s.p
	switch {
	case p.rewrite:
		return nil, redisError("ERR Background append only file rewriting already in progress")
	case p.bgsave || c.inExec:
		p.rewriteScheduled = true
		p.rewriteFailures = 0
		return resp.Simple("Background append only file rewriting scheduled"), nil
	}
	if err := p.startRewrite(); err != nil {
		return nil, redisError("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.")
	}
	return resp.Simple("Background append only file rewriting started"), nil
}

func cmdLastsaveP(c *client, args [][]byte) (any, error) { return c.s.p.lastSave.Unix(), nil }

// writeInfo is INFO persistence. Store lock held.
func (p *persistence) writeInfo(kv func(string, any)) {
	s := p.s
	kv("loading", 0)
	kv("async_loading", 0)
	kv("current_cow_peak", 0)
	kv("current_cow_size", 0)
	kv("current_fork_perc", "0.00")
	kv("current_save_keys_processed", 0)
	kv("current_save_keys_total", 0)
	kv("rdb_changes_since_last_save", s.dirty-p.dirtyAtSave)
	kv("rdb_bgsave_in_progress", boolInt(p.bgsave))
	kv("rdb_last_save_time", p.lastSave.Unix())
	kv("rdb_last_bgsave_status", okErr(p.lastBgsaveOK))
	kv("rdb_last_bgsave_time_sec", p.lastBgsaveSec)
	cur := int64(-1)
	if p.bgsave {
		cur = int64(time.Since(p.bgsaveStart).Seconds())
	}
	kv("rdb_current_bgsave_time_sec", cur)
	kv("rdb_saves", p.saves)
	kv("aof_enabled", boolInt(p.w != nil))
	kv("aof_rewrite_in_progress", boolInt(p.rewrite))
	kv("aof_rewrite_scheduled", boolInt(p.rewriteScheduled))
	kv("aof_last_rewrite_time_sec", p.lastRewriteSec)
	cur = -1
	if p.rewrite {
		cur = int64(time.Since(p.rewriteStart).Seconds())
	}
	kv("aof_current_rewrite_time_sec", cur)
	kv("aof_last_bgrewrite_status", okErr(p.lastRewriteOK))
	kv("aof_rewrites", p.rewrites)
	kv("aof_rewrites_consecutive_failures", p.rewriteFailures)
	var st aof.Stats
	if p.w != nil {
		st = p.w.Stats()
	}
	kv("aof_last_write_status", okErr(st.LastWriteErr == nil))
	kv("aof_last_cow_size", 0)
	kv("module_fork_in_progress", 0)
	kv("module_fork_last_cow_size", 0)
	if p.w != nil {
		kv("aof_current_size", p.baseSize+st.CurrentSize)
		kv("aof_base_size", p.baseSize)
		kv("aof_pending_rewrite", 0)
		kv("aof_buffer_length", st.PendingBytes)
		kv("aof_pending_bio_fsync", boolInt(st.BgSyncRunning))
		kv("aof_delayed_fsync", st.DelayedFsync)
		// qbench's own fields: the fsync policy's effect.
		kv("aof_appendfsync", p.policy.String())
		kv("aof_fsyncs", st.Fsyncs)
		kv("aof_written_records", st.WrittenRecords)
		kv("aof_synced_records", st.SyncedRecords)
		wpf := 0.0
		if st.Fsyncs > 0 {
			wpf = float64(st.SyncedRecords) / float64(st.Fsyncs)
		}
		kv("aof_writes_per_fsync", fmt.Sprintf("%.2f", wpf))
	}
	kv("loaded_records", p.loadedRecords)
	kv("load_time_ms", p.loadTime.Milliseconds())
	kv("latest_snapshot_pause_usec", p.pauseUsec)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}

// copyArgs copies a command's arguments out of the connection's read buffer.
func copyArgs(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// Restart starts a new server with s's configuration on s's address, Dir and FS: after Crash
// (and a simulated power loss) it is the recovery. s must be closed or crashed.
func (s *Server) Restart() (*Server, error) {
	cfg := s.cfg
	if s.addr != "" {
		cfg.Addr = s.addr
	}
	n := New(cfg)
	if err := n.Start(); err != nil {
		return nil, err
	}
	return n, nil
}

// PowerLoss simulates a power cut of a server running on a simulated file system: Crash, then
// every file keeps only what was fsynced (torn: plus a random part of its unsynced tail), then
// Restart on the same address. It fails if the server's FS is not an *fsys.Sim.
func (s *Server) PowerLoss(torn bool, rng *rand.Rand) (*Server, error) {
	sim, ok := s.cfg.FS.(*fsys.Sim)
	if !ok {
		return nil, errors.New("power loss needs the simulated file system (Config.FS = fsys.NewSim())")
	}
	s.Crash()
	sim.PowerLoss(torn, rng)
	return s.Restart()
}

// waitAOF is WAITAOF's local part: with the AOF on, everything logged so far is fsynced before
// the reply (under everysec and no too), so the answer is one local fsync and no replicas.
// Store lock held; the fsync does not need it.
func (p *persistence) waitAOF() (any, error) {
	if p.w == nil {
		return resp.Array{0, 0}, nil
	}
	if err := p.w.Sync(); err != nil {
		return nil, redisError("MISCONF Errors writing to the AOF file: " + strerror(err))
	}
	return resp.Array{1, 0}, nil
}

// Done is closed when the server closes (Close, SHUTDOWN, Crash): `qbench serve` exits on it.
func (s *Server) Done() <-chan struct{} { return s.closing }
