// Package fsys is the server's file-system seam. OS is the real thing; Sim is an in-memory file
// system that tracks, for every file, how many bytes an fsync has made durable and which names a
// directory fsync has made durable, so a power cut (PowerLoss) is exact and repeatable. Sim also
// injects write and fsync errors (a full or failing disk).
package fsys

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// File is an open file the server appends to.
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// InlineSyncer is a File whose sync can run without the scheduler handing the caller's
// processor to another thread while the disk works (SyncInline). Only a caller that nothing
// else waits on for that processor may use it: the Go scheduler sees it as running, so with
// GOMAXPROCS=1 every other goroutine would wait for the disk too.
type InlineSyncer interface {
	SyncInline() error
}

// Preallocator is a File that can write zeros ahead of its data (Preallocate: at [off, off+n),
// without moving the write offset). Once those zeros are synced, later writes there overwrite
// allocated blocks and do not change the file's size, so their fdatasync has no metadata to
// commit to the file system's journal: on ext4 here 1.1-2x as many syncs per second as
// appends that extend the file (see aof.Writer's preallocation). The OS file on Linux is one;
// Sim files are not, so the crash tests' byte-prefix model stays exact.
type Preallocator interface {
	Preallocate(off, n int64) error
}

// SpaceReporter is a file that can tell the space left on its file system (statfs): what
// unprivileged writers may still allocate, and whether the file system is copy-on-write (an
// overwrite allocates new blocks). The AOF writer bounds its preallocation by it.
type SpaceReporter interface {
	Space() (avail int64, cow bool, err error)
}

// FS is what the persistence code needs from a file system. Names are slash or OS paths.
type FS interface {
	// OpenAppend opens name for appending, creating it if needed; the offset is at the end.
	OpenAppend(name string) (File, error)
	// Create creates or truncates name for writing.
	Create(name string) (File, error)
	ReadFile(name string) ([]byte, error)
	WriteFile(name string, b []byte) error // not synced
	Rename(oldName, newName string) error
	Remove(name string) error
	MkdirAll(dir string) error
	// SyncDir makes the directory's entries (creations, renames, removals) durable.
	SyncDir(dir string) error
	// ReadDir lists the names of the files in dir, sorted.
	ReadDir(dir string) ([]string, error)
	// Size is the file's length, or an error wrapping fs.ErrNotExist.
	Size(name string) (int64, error)
}

// OS is the real file system.
type OS struct{}

// OpenAppend's file syncs with fdatasync on Linux (datasync_linux.go): an append changes the
// data and the size, which fdatasync makes durable, and not the timestamps, which it skips. On
// Linux it is a Preallocator (append_linux.go).
func (OS) OpenAppend(name string) (File, error) { return openAppend(name) }

// Create's file syncs with fsync: a new file (a snapshot, a manifest, a new base) is written
// once, and fsync makes all of its inode durable.
func (OS) Create(name string) (File, error)      { return os.Create(name) }
func (OS) ReadFile(name string) ([]byte, error)  { return os.ReadFile(name) }
func (OS) WriteFile(name string, b []byte) error { return os.WriteFile(name, b, 0o644) }
func (OS) Rename(o, n string) error              { return os.Rename(o, n) }
func (OS) Remove(name string) error              { return os.Remove(name) }
func (OS) MkdirAll(dir string) error             { return os.MkdirAll(dir, 0o755) }
func (OS) Size(name string) (int64, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (OS) ReadDir(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range es {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// WriteFileAtomic writes b to name through a temporary file: write, fsync, rename, fsync the
// directory. A crash leaves either the old contents or the new, never a mix.
func WriteFileAtomic(fsys FS, name string, b []byte) error {
	tmp := name + ".tmp"
	if err := WriteFileSynced(fsys, tmp, b); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(name))
}

// WriteFileSynced writes b to name (created or truncated) and fsyncs it before closing: the
// contents are durable when it returns; the directory entry is once the caller syncs the
// directory.
func WriteFileSynced(fsys FS, name string, b []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// IsNotExist reports whether err says a file does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
