// Package lossyfs is a FUSE file system that forgets what was not fsynced, like Jepsen's LazyFS:
// a power-loss simulator for real servers (redis-server, Kafka) run with their data directory on it.
//
// The model: metadata operations (create, rename, unlink, mkdir, chmod) pass straight to the backing
// directory and are durable at once. File data and file sizes are held in memory per file until
// fsync or fdatasync (or Sync) writes them to the backing file. Reads merge the two, so every reader
// sees every write. Cut is the power loss: every unsynced byte and size change is dropped, the
// kernel's caches of them are invalidated, and every later change fails with EIO until Recover (or a
// new mount). Closing a file persists nothing; a clean Unmount writes dirty data back, as an orderly
// shutdown would, unless the power was cut.
package lossyfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Options tune a mount. The zero value is the default.
type Options struct {
	// CacheTimeout is how long the kernel may cache names and attributes (default 1s). A cut
	// invalidates what it changed, so this only trades lookups for speed.
	CacheTimeout time.Duration
	// NoBackingSync skips the fdatasync of the backing file on a sync: syncs become cheap and the
	// simulation is unchanged, but a real crash of this machine could lose "synced" data.
	NoBackingSync bool
	// XAttrs passes extended attributes through to the backing directory. Off by default: then
	// the kernel, told once that xattrs are not implemented, stops asking for security.capability
	// before every write, which halves the FUSE round trips of a small write.
	XAttrs bool
	// AllowOther lets users other than the mounting one use the mount (needs root or user_allow_other).
	AllowOther bool
	// Debug logs every FUSE request to stderr.
	Debug bool
}

// FS is a mounted lossy file system.
type FS struct {
	backing, mountpoint string
	opts                Options
	server              *fuse.Server
	root                *fs.LoopbackRoot

	cut    atomic.Bool  // power is off: every change fails with EIO
	full   atomic.Bool  // disk full: writes and creates fail with ENOSPC
	ioFail atomic.Int32 // an IOPoint: writes or fsyncs fail with EIO (a failing disk)

	mu    sync.Mutex
	files map[uint64]*fileState // by StableAttr.Ino (the backing inode)
	nodes map[uint64]*fs.Inode  // last inode seen per file, for cache invalidation
}

// Mount mounts a lossy view of the directory backing at mountpoint and serves it until Unmount.
//
// The mount is served by this process: never start a child whose working directory (exec.Cmd.Dir)
// or executable is on it. Go's vfork child changes directory before exec while the parent's
// forking thread holds a P with signals blocked; if the child waits on the mount while a GC
// stop-the-world begins, both hang for good. Pass the mount as an argument (redis-server --dir,
// Kafka's log.dirs) and keep the working directory elsewhere.
func Mount(backing, mountpoint string, opts Options) (*FS, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("lossyfs: backing directory: %w", err)
	}
	if opts.CacheTimeout == 0 {
		opts.CacheTimeout = time.Second
	}
	f := &FS{
		backing:    backing,
		mountpoint: mountpoint,
		opts:       opts,
		root:       &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)},
		files:      map[uint64]*fileState{},
		nodes:      map[uint64]*fs.Inode{},
	}
	rootNode := &node{LoopbackNode: &fs.LoopbackNode{RootData: f.root}, lfs: f}
	f.root.RootNode = rootNode
	timeout := opts.CacheTimeout
	server, err := fs.Mount(mountpoint, rootNode, &fs.Options{
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
		MountOptions: fuse.MountOptions{
			FsName:        backing,
			Name:          "lossyfs",
			AllowOther:    opts.AllowOther,
			DisableXAttrs: !opts.XAttrs,
			Debug:         opts.Debug,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("lossyfs: mount %s: %w", mountpoint, err)
	}
	f.server = server
	return f, nil
}

// Mountpoint is where the file system is mounted.
func (f *FS) Mountpoint() string { return f.mountpoint }

// Cut simulates a power loss: every unsynced write and size change is dropped, the kernel forgets
// its cached copies, and every later change fails with EIO until Recover.
func (f *FS) Cut() {
	f.cut.Store(true)
	f.mu.Lock()
	var inval []*fs.Inode
	for ino, s := range f.files {
		s.mu.Lock()
		if s.dirty() {
			if n := f.nodes[ino]; n != nil {
				inval = append(inval, n)
			}
		}
		s.drop()
		s.mu.Unlock()
		if s.refs == 0 {
			f.forget(ino, s)
		}
	}
	f.mu.Unlock()
	// Outside the locks: the kernel may call back into the file system while it invalidates.
	for _, n := range inval {
		n.NotifyContent(0, 0)
	}
}

// Recover turns the power back on: changes are accepted again. What the cut dropped stays lost.
func (f *FS) Recover() { f.cut.Store(false) }

// FailWrites makes writes, extending truncates and creates fail with ENOSPC (a full disk) while on.
// Syncs of already accepted data still succeed.
func (f *FS) FailWrites(on bool) { f.full.Store(on) }

// IOPoint is where a failing disk reports an I/O error (EIO): see FailIO.
type IOPoint int32

const (
	IONone  IOPoint = iota // no I/O errors
	IOWrite                // writes, extending truncates and creates fail with EIO
	IOFsync                // fsync and fdatasync of files fail with EIO; the data stays unsynced
)

// ioPointNames are the points' names in the control protocol and the status line.
var ioPointNames = map[IOPoint]string{IONone: "none", IOWrite: "write", IOFsync: "fsync"}

func (p IOPoint) String() string { return ioPointNames[p] }

// FailIO makes the disk fail with EIO at point (IONone turns it off): an I/O error that is not a
// full disk. Under IOFsync, writes are accepted into the cache and every file fsync fails, as a
// disk whose writeback fails would report; the control Sync still works.
func (f *FS) FailIO(point IOPoint) { f.ioFail.Store(int32(point)) }

// Sync writes every file's unsynced data to the backing directory, as if each were fsynced.
func (f *FS) Sync() error {
	if f.cut.Load() {
		return syscall.EIO
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for ino, s := range f.files {
		if err := f.syncState(s); err != nil {
			errs = append(errs, err)
		} else if s.refs == 0 {
			f.forget(ino, s)
		}
	}
	return errors.Join(errs...)
}

// Status describes the file system's state.
type Status struct {
	Cut, FailWrites bool
	FailIO          IOPoint
	DirtyFiles      int
	DirtyBytes      int64 // whole dirty pages
}

// Status reports whether the power is cut, whether writes fail, and how much is unsynced.
func (f *FS) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := Status{Cut: f.cut.Load(), FailWrites: f.full.Load(), FailIO: IOPoint(f.ioFail.Load())}
	for _, s := range f.files {
		s.mu.Lock()
		if s.dirty() {
			st.DirtyFiles++
			st.DirtyBytes += s.dirtyBytes()
		}
		s.mu.Unlock()
	}
	return st
}

// Unmount unmounts the file system. Unless the power was cut, dirty data is written back first, as
// an orderly shutdown would. If a process still uses the mount, it is detached lazily.
func (f *FS) Unmount() error {
	err := f.server.Unmount()
	if err != nil {
		// Busy: detach it now; the kernel finishes when the last user goes.
		if out, lerr := exec.Command("fusermount3", "-u", "-z", f.mountpoint).CombinedOutput(); lerr != nil {
			return fmt.Errorf("lossyfs: unmount %s: %v; fusermount3 -u -z: %v: %s", f.mountpoint, err, lerr, out)
		}
		err = nil
	}
	served := make(chan struct{})
	go func() { f.server.Wait(); close(served) }()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		// Still in use after a lazy unmount: keep serving its users; their data is not written back.
		return fmt.Errorf("lossyfs: %s detached but still in use; unsynced data not written back", f.mountpoint)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.cut.Load() {
		for _, s := range f.files {
			err = errors.Join(err, f.syncState(s))
		}
	}
	for ino, s := range f.files {
		f.forget(ino, s)
	}
	return err
}

// syncState writes one file's dirty data back. The cut check is under the file's lock, so a sync
// racing with a cut either writes before the cut drops anything or fails. The backing fdatasync
// (the real disk's cost of a sync) runs outside the lock: on a real file system a write does not
// wait for another thread's fsync of the same file, and Redis's everysec relies on that.
func (f *FS) syncState(s *fileState) error {
	s.mu.Lock()
	if f.cut.Load() {
		s.mu.Unlock()
		return syscall.EIO
	}
	wrote, err := s.sync()
	s.mu.Unlock()
	if err != nil || !wrote || f.opts.NoBackingSync {
		return err
	}
	return unix.Fdatasync(int(s.fd.Fd()))
}

// idle reports whether a state may be forgotten. Called with f.mu held.
func (f *FS) idle(s *fileState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refs == 0 && (!s.dirty() || s.orphan())
}

// forget drops a file's state and closes its descriptor. Called with f.mu held.
func (f *FS) forget(ino uint64, s *fileState) {
	delete(f.files, ino)
	delete(f.nodes, ino)
	s.fd.Close()
}

// acquire returns the state of inode's file with one more reference, opening the backing file at
// path if the file has no state yet.
func (f *FS) acquire(inode *fs.Inode, path string) (*fileState, syscall.Errno) {
	ino := inode.StableAttr().Ino
	f.mu.Lock()
	if s := f.files[ino]; s != nil {
		s.refs++
		f.nodes[ino] = inode
		f.mu.Unlock()
		return s, 0
	}
	f.mu.Unlock()

	fd, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		// A file we cannot write (read-only backing): reads still work, writes fail.
		fd, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	s, err := newFileState(fd)
	if err != nil {
		fd.Close()
		return nil, fs.ToErrno(err)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.files[ino]; old != nil { // lost a race with another opener
		fd.Close()
		s = old
	}
	s.refs++
	f.files[ino] = s
	f.nodes[ino] = inode
	return s, 0
}

// release drops a reference. A file's state goes when no handle uses it and it is clean or has no
// name left (nothing could ever read the dirty data).
func (f *FS) release(ino uint64, s *fileState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.refs--
	if f.files[ino] == s && f.idle(s) {
		f.forget(ino, s)
	}
}

// dropIfOrphan forgets an unused file's state once its last name is gone.
func (f *FS) dropIfOrphan(ino uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.files[ino]; s != nil && f.idle(s) {
		f.forget(ino, s)
	}
}

// logicalSize returns the buffered size of a file, if it has state.
func (f *FS) logicalSize(ino uint64) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.files[ino]; s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.size, true
	}
	return 0, false
}

// changeErr is the error for any change while the power is off or the disk is full.
func (f *FS) changeErr(grows bool) syscall.Errno {
	if f.cut.Load() {
		return syscall.EIO
	}
	if grows && IOPoint(f.ioFail.Load()) == IOWrite {
		return syscall.EIO
	}
	if grows && f.full.Load() {
		return syscall.ENOSPC
	}
	return 0
}
