package server

// Loading at start-up (AOF or snapshot) and turning the AOF on.

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
	"qbench/engines/server/store"
)

// load runs at Start, before the listener opens: with appendonly yes it loads the AOF (base,
// then incremental files) and opens the log; otherwise it loads the snapshot, if any. When
// neither exists and Config.SeedRDB names a file, the dataset starts from it (persist_seed.go).
func (p *persistence) load() error {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p.lastSave = time.Now()
	p.lastTickAt = p.lastSave
	start := time.Now()
	c := &client{s: s, proto: 2, authed: true}
	if !s.cfg.AppendOnly {
		n, found, err := p.loadSnapshot(c)
		if err == nil && !found {
			n, err = p.seedLocked()
		}
		p.loadedRecords, p.loadTime = n, time.Since(start)
		return err
	}
	p.layout = aof.NewLayout(p.fs, p.dir, p.prefix)
	found, err := p.layout.Load()
	if err != nil {
		return err
	}
	if !found {
		// A first start with the AOF on: take over a snapshot (or else the seed) as the base,
		// so a restart recovers from the AOF and never seeds again.
		_, found, err := p.loadSnapshot(c)
		if err == nil && !found {
			_, err = p.seedLocked()
		}
		if err != nil {
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

// loadSnapshot loads dump.qdb; found is false when there is none.
func (p *persistence) loadSnapshot(c *client) (n int64, found bool, err error) {
	data, err := p.fs.ReadFile(p.snapshotPath())
	if fsys.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, true, err
	}
	_, err = aof.Scan(p.snapshotPath(), data, func(_ int64, r aof.Record) error {
		n++
		return p.apply(c, r)
	})
	if err != nil {
		return n, true, fmt.Errorf("loading the snapshot: %w", err)
	}
	return n, true, nil
}

// startAOFLocked turns the AOF on: the current dataset becomes a base file, a new incremental
// file is opened and the manifest names both. Store lock held.
func (p *persistence) startAOFLocked() error {
	p.layout = aof.NewLayout(p.fs, p.dir, p.prefix)
	found, err := p.layout.Load()
	if err != nil {
		return err
	}
	if !found {
		// Log files without a manifest: the new incremental file would be one of them
		// (sequence 1) and start over empty. Refuse rather than destroy what was not loaded.
		orphans, err := p.layout.Orphans()
		if err != nil {
			return err
		}
		if len(orphans) > 0 {
			err := &aof.NoManifestError{Manifest: p.layout.ManifestPath(), Files: orphans}
			p.s.logf("Fatal error: %v", err)
			return err
		}
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

// errNestedTransaction: a transaction record inside another, which the server never writes.
var errNestedTransaction = errors.New("transaction record holds another transaction record (the server never writes one; the log was altered)")

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
			if err != nil {
				return fmt.Errorf("transaction record: %w", err)
			}
			if sub.Kind == aof.KindMulti {
				return errNestedTransaction
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
