package server

// Background jobs (BGSAVE, BGREWRITEAOF) and the persistence cron that starts and finishes them.

import (
	"strconv"
	"time"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
	"qbench/engines/server/store"
)

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
	if background && p.forkFails {
		return p.forkBgsave()
	}
	t0 := time.Now()
	data := p.snapshotLocked()
	p.pauseUsec = time.Since(t0).Microseconds()
	dirty := s.dirty
	path := p.snapshotPath()
	finish := func(err error) {
		if err == nil {
			p.lastSave, p.dirtyAtSave = time.Now(), dirty
			p.saves++
			p.lastBgsaveOK = true // a SAVE that succeeds clears a failed BGSAVE, as in Redis
		} else if background {
			p.lastBgsaveOK = false // a failed SAVE leaves the status alone (Redis's rdbSave)
		}
	}
	if !background {
		err := fsys.WriteFileAtomic(p.fs, path, data)
		finish(err)
		return err
	}
	p.bgsave, p.bgsaveStart = true, time.Now()
	p.lastBgsaveTry = p.bgsaveStart
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		err := fsys.WriteFileAtomic(p.fs, path, data)
		p.done <- func() { p.bgsaveDone(err, finish) }
	}()
	return nil
}

// wholeSecondsSince is Redis's time(NULL) - start: the seconds of the wall clock between start and
// now, so a save of a few milliseconds that crosses a second reads 1, as it does in Redis's INFO.
func wholeSecondsSince(start time.Time) int64 { return wholeSeconds(start, time.Now()) }

func wholeSeconds(start, end time.Time) int64 { return end.Unix() - start.Unix() }

// bgsaveDone completes a BGSAVE. Store lock held.
func (p *persistence) bgsaveDone(err error, finish func(error)) {
	p.bgsave = false
	p.lastBgsaveSec = wholeSecondsSince(p.bgsaveStart)
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
	// Redis forks here, after opening the new incremental file; the store lock has been held
	// since the rotation, so the dataset serialised now is the one the old files hold.
	if p.forkFails {
		return p.forkRewrite()
	}
	data := p.snapshotLocked()
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
	p.lastRewriteSec = wholeSecondsSince(p.rewriteStart)
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
	// A scheduled job that cannot fork stays scheduled, as in Redis's serverCron: a rewrite is
	// tried again at the next tick, a BGSAVE after the retry delay of a failed save.
	if p.rewriteScheduled {
		err := p.startRewrite()
		if !isForkError(err) { // a failed fork has logged already
			p.rewriteScheduled = false
			if err != nil {
				p.s.logf("scheduled AOF rewrite: %v", err)
			}
		}
	} else if p.bgsaveScheduled && (p.lastBgsaveOK || time.Since(p.lastBgsaveTry) > bgsaveRetryDelay) {
		if p.save(true) == nil {
			p.bgsaveScheduled = false
		}
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
			// After a failed background save the rules wait bgsaveRetryDelay (Redis's serverCron).
			if !p.bgsave && !p.rewrite && (p.lastBgsaveOK || now.Sub(p.lastBgsaveTry) > bgsaveRetryDelay) {
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
					if err := p.startRewrite(); err != nil && !isForkError(err) {
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
