package fsys

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Sim is an in-memory file system that knows what a power cut would keep: for each file the
// length covered by its last fsync, and for each directory the entries as of its last fsync.
// PowerLoss throws everything else away. It is safe for concurrent use.
type Sim struct {
	mu sync.Mutex
	// live is the namespace as processes see it; durable is what survives a power cut.
	live    map[string]*inode
	durable map[string]*inode
	dirs    map[string]bool

	writeErr, syncErr error
	syncErrOnce       error // fails the next file Sync only (Linux reports a writeback error once)
	spaceLeft         int64 // bytes that may still be written; <0 = unlimited

	Writes, Syncs int64 // counters, for tests
	failures      int64 // writes and syncs failed by an injected error (Failures)

	// SyncHook, if set, runs at the start of every file Sync, outside the lock: a test can hold
	// an fsync in progress.
	SyncHook func(name string)
}

type inode struct {
	data   []byte
	synced int // bytes covered by fsync (see dropped)
	// dropped are byte ranges whose writeback failed: Linux (4.13+) reports the error to one
	// fsync, marks the pages clean and returns 0 from the next fsync, so these bytes never reach
	// the disk although later fsyncs succeed. The page cache still holds them (reads see them);
	// a power cut leaves zeros there.
	dropped [][2]int
}

// NewSim returns an empty simulated file system with unlimited space.
func NewSim() *Sim {
	return &Sim{live: map[string]*inode{}, durable: map[string]*inode{}, dirs: map[string]bool{}, spaceLeft: -1}
}

func clean(name string) string { return filepath.Clean(name) }

// FailWrites makes every later Write fail with err (nil clears it), like EIO.
func (s *Sim) FailWrites(err error) { s.mu.Lock(); s.writeErr = err; s.mu.Unlock() }

// FailSyncs makes every later Sync fail with err (nil clears it), as a failing disk: each
// failure drops the file's dirty pages, as Linux does (see inode.dropped).
func (s *Sim) FailSyncs(err error) { s.mu.Lock(); s.syncErr = err; s.mu.Unlock() }

// FailSyncOnce makes the next file Sync fail with err, dropping the file's dirty pages; later
// Syncs succeed (and do not write the dropped bytes): Linux's behaviour on a transient
// writeback error, the "fsyncgate" case.
func (s *Sim) FailSyncOnce(err error) { s.mu.Lock(); s.syncErrOnce = err; s.mu.Unlock() }

// Failures counts writes and syncs that an injected error failed.
func (s *Sim) Failures() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.failures }

// SetSpace limits how many more bytes may be written (a full disk: short write then ENOSPC);
// n < 0 means unlimited.
func (s *Sim) SetSpace(n int64) { s.mu.Lock(); s.spaceLeft = n; s.mu.Unlock() }

// PowerLoss simulates a power cut: every directory reverts to its last fsynced entries and
// every file to its last fsynced length. With torn set, a file with unsynced bytes keeps a
// random prefix of them instead (a write the disk had half done), using rng.
func (s *Sim) PowerLoss(torn bool, rng *rand.Rand) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = map[string]*inode{}
	for name, ino := range s.durable {
		keep := ino.synced
		if torn && rng != nil && len(ino.data) > ino.synced {
			keep += rng.IntN(len(ino.data) - ino.synced + 1)
		}
		ino.data = ino.data[:keep:keep]
		ino.synced = keep
		for _, d := range ino.dropped {
			for i := d[0]; i < d[1] && i < keep; i++ {
				ino.data[i] = 0
			}
		}
		ino.dropped = nil
		s.live[name] = ino
	}
}

// Unsynced is the number of bytes a power cut would lose from name now.
func (s *Sim) Unsynced(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ino := s.live[clean(name)]
	if ino == nil {
		return 0
	}
	return len(ino.data) - ino.synced
}

// Corrupt overwrites b at off in name (for tests of damaged files); the change counts as durable.
func (s *Sim) Corrupt(name string, off int, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ino := s.live[clean(name)]
	if ino == nil || off+len(b) > len(ino.data) {
		return fmt.Errorf("corrupt %s: out of range", name)
	}
	copy(ino.data[off:], b)
	return nil
}

type simFile struct {
	s      *Sim
	name   string
	ino    *inode
	closed bool
}

func (s *Sim) open(name string, trunc bool) (File, error) {
	name = clean(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirs[filepath.Dir(name)] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	ino := s.live[name]
	if ino == nil {
		ino = &inode{}
		s.live[name] = ino
	} else if trunc {
		ino.data = nil
		ino.synced = 0
		ino.dropped = nil
	}
	return &simFile{s: s, name: name, ino: ino}, nil
}

func (s *Sim) OpenAppend(name string) (File, error) { return s.open(name, false) }
func (s *Sim) Create(name string) (File, error)     { return s.open(name, true) }

func (f *simFile) Write(p []byte) (int, error) {
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.closed {
		return 0, fs.ErrClosed
	}
	if s.writeErr != nil {
		s.failures++
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: s.writeErr}
	}
	n := len(p)
	var err error
	if s.spaceLeft >= 0 && int64(n) > s.spaceLeft {
		n = int(s.spaceLeft)
		err = &fs.PathError{Op: "write", Path: f.name, Err: errNoSpace}
		s.failures++
	}
	f.ino.data = append(f.ino.data, p[:n]...)
	if s.spaceLeft >= 0 {
		s.spaceLeft -= int64(n)
	}
	s.Writes++
	return n, err
}

func (f *simFile) Sync() error {
	s := f.s
	s.mu.Lock()
	hook := s.SyncHook
	s.mu.Unlock()
	if hook != nil {
		hook(f.name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	err := s.syncErr
	if err == nil {
		err, s.syncErrOnce = s.syncErrOnce, nil
	}
	if err != nil {
		s.failures++
		if len(f.ino.data) > f.ino.synced {
			f.ino.dropped = append(f.ino.dropped, [2]int{f.ino.synced, len(f.ino.data)})
		}
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	f.ino.synced = len(f.ino.data)
	s.Syncs++
	return nil
}

func (f *simFile) Truncate(size int64) error {
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if size < int64(len(f.ino.data)) {
		if s.spaceLeft >= 0 {
			s.spaceLeft += int64(len(f.ino.data)) - size
		}
		f.ino.data = f.ino.data[:size:size]
		f.ino.synced = min(f.ino.synced, int(size))
		var kept [][2]int
		for _, d := range f.ino.dropped {
			if d[0] < int(size) {
				kept = append(kept, [2]int{d[0], min(d[1], int(size))})
			}
		}
		f.ino.dropped = kept
	}
	return nil
}

func (f *simFile) Close() error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.closed = true
	return nil
}

func (s *Sim) ReadFile(name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ino := s.live[clean(name)]
	if ino == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return append([]byte(nil), ino.data...), nil
}

func (s *Sim) WriteFile(name string, b []byte) error {
	f, err := s.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Close()
}

func (s *Sim) Size(name string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ino := s.live[clean(name)]
	if ino == nil {
		return 0, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return int64(len(ino.data)), nil
}

func (s *Sim) Rename(o, n string) error {
	o, n = clean(o), clean(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	ino := s.live[o]
	if ino == nil {
		return &fs.PathError{Op: "rename", Path: o, Err: fs.ErrNotExist}
	}
	delete(s.live, o)
	s.live[n] = ino
	return nil
}

func (s *Sim) Remove(name string) error {
	name = clean(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[name] == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(s.live, name)
	return nil
}

// MkdirAll creates dir; directories themselves are taken as durable.
func (s *Sim) MkdirAll(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for d := clean(dir); ; d = filepath.Dir(d) {
		s.dirs[d] = true
		if d == filepath.Dir(d) {
			break
		}
	}
	return nil
}

// SyncDir makes dir's current entries durable: names created or renamed into it survive a
// power cut, names removed from it stay removed.
func (s *Sim) SyncDir(dir string) error {
	dir = clean(dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.syncErr != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: s.syncErr}
	}
	for name := range s.durable {
		if filepath.Dir(name) == dir {
			delete(s.durable, name)
		}
	}
	for name, ino := range s.live {
		if filepath.Dir(name) == dir {
			s.durable[name] = ino
		}
	}
	return nil
}

func (s *Sim) ReadDir(dir string) ([]string, error) {
	dir = clean(dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirs[dir] {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	var names []string
	for name := range s.live {
		if filepath.Dir(name) == dir {
			names = append(names, strings.TrimPrefix(name, dir+string(filepath.Separator)))
		}
	}
	sort.Strings(names)
	return names, nil
}
