package lossyfs

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is a file or directory. Metadata operations pass to the embedded loopback node (durable at
// once); everything that reads or changes file data or sizes goes through a fileState. The loopback
// file handle is never handed to the kernel: go-fuse would enable kernel passthrough for it as root,
// and writes would bypass us.
type node struct {
	*fs.LoopbackNode
	lfs *FS
}

var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeStatxer        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeTmpfiler       = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeSetxattrer     = (*node)(nil)
	_ fs.NodeRemovexattrer  = (*node)(nil)
	_ fs.FileReader         = (*handle)(nil)
	_ fs.FileWriter         = (*handle)(nil)
	_ fs.FileFlusher        = (*handle)(nil)
	_ fs.FileReleaser       = (*handle)(nil)
	_ fs.FileReaddirenter   = (*dirHandle)(nil)
	_ fs.FileSeekdirer      = (*dirHandle)(nil)
	_ fs.FileReleasedirer   = (*dirHandle)(nil)
)

func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), lfs: n.lfs}
}

func (n *node) ino() uint64 { return n.StableAttr().Ino }

func (n *node) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.RootData.RootNode.EmbeddedInode()))
}

// fixSize reports the logical size: the kernel computes append offsets from it, so a smaller
// backing size would make appends overwrite unsynced data.
func (f *FS) fixSize(ino uint64, attr *fuse.Attr) {
	if size, ok := f.logicalSize(ino); ok {
		attr.Size = uint64(size)
		attr.Blocks = (uint64(size) + 511) / 512
	}
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno == 0 {
		n.lfs.fixSize(ch.StableAttr().Ino, &out.Attr)
	}
	return ch, errno
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := f.(*handle); ok {
		var st syscall.Stat_t
		if err := syscall.Fstat(int(h.st.fd.Fd()), &st); err != nil {
			return fs.ToErrno(err)
		}
		out.FromStat(&st)
	} else if errno := n.LoopbackNode.Getattr(ctx, nil, out); errno != 0 {
		return errno
	}
	n.lfs.fixSize(n.ino(), &out.Attr)
	return 0
}

func (n *node) Statx(ctx context.Context, f fs.FileHandle, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if h, ok := f.(*handle); ok {
		var x unix.Statx_t
		if err := unix.Statx(int(h.st.fd.Fd()), "", int(flags)|unix.AT_EMPTY_PATH, int(mask), &x); err != nil {
			return fs.ToErrno(err)
		}
		out.FromStatx(&x)
	} else if errno := n.LoopbackNode.Statx(ctx, nil, flags, mask, out); errno != 0 {
		return errno
	}
	if size, ok := n.lfs.logicalSize(n.ino()); ok {
		out.Statx.Size = uint64(size)
		out.Statx.Blocks = (uint64(size) + 511) / 512
	}
	return 0
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := n.lfs.changeErr(false); errno != 0 {
		return errno
	}
	if size, ok := in.GetSize(); ok && !n.IsDir() {
		h, _ := f.(*handle)
		s := (*fileState)(nil)
		if h != nil {
			s = h.st
		} else {
			var errno syscall.Errno
			if s, errno = n.lfs.acquire(n.EmbeddedInode(), n.backingPath()); errno != 0 {
				return errno
			}
			defer n.lfs.release(n.ino(), s)
		}
		if errno := n.lfs.truncate(s, int64(size)); errno != 0 {
			return errno
		}
		rest := *in
		rest.Valid &^= fuse.FATTR_SIZE
		in = &rest
	}
	// Mode, owner and times: metadata, durable at once.
	if errno := n.LoopbackNode.Setattr(ctx, nil, in, out); errno != 0 {
		return errno
	}
	return n.Getattr(ctx, f, out)
}

func (f *FS) truncate(s *fileState, size int64) syscall.Errno {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errno := f.changeErr(size > s.size); errno != 0 {
		return errno
	}
	s.truncate(size)
	return 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return n.lfs.open(n.EmbeddedInode(), n.backingPath(), flags)
}

func (f *FS) open(inode *fs.Inode, path string, flags uint32) (*handle, uint32, syscall.Errno) {
	s, errno := f.acquire(inode, path)
	if errno != 0 {
		return nil, 0, errno
	}
	h := &handle{lfs: f, ino: inode.StableAttr().Ino, st: s, append: flags&syscall.O_APPEND != 0}
	s.mu.Lock()
	h.seenCuts = s.cuts
	s.mu.Unlock()
	if flags&syscall.O_TRUNC != 0 {
		if errno := f.truncate(s, 0); errno != 0 {
			f.release(h.ino, s)
			return nil, 0, errno
		}
	}
	return h, 0, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.lfs.changeErr(true); errno != 0 {
		return nil, nil, 0, errno
	}
	// The name is metadata (durable now); a truncation of existing data is not.
	ch, lf, _, errno := n.LoopbackNode.Create(ctx, name, flags&^syscall.O_TRUNC, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if r, ok := lf.(fs.FileReleaser); ok {
		r.Release(ctx)
	}
	// The child is not linked under n yet: its path comes from ours.
	fh, _, errno := n.lfs.open(ch, filepath.Join(n.backingPath(), name), flags)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	n.lfs.fixSize(ch.StableAttr().Ino, &out.Attr)
	return ch, fh, 0, 0
}

// Tmpfile (O_TMPFILE) is refused: callers fall back to a named temporary file.
func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// CopyFileRange is refused so the kernel falls back to reads and writes through us.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}

// Fsync serves fsync and fdatasync of files (both are durable points) and of directories. Directory
// entries are durable at once, and a directory fsync is answered "not implemented", which the kernel
// turns into success; "not supported" would fail it, and Redis refuses to start.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if n.IsDir() {
		return syscall.ENOSYS
	}
	if IOPoint(n.lfs.ioFail.Load()) == IOFsync && !n.lfs.cut.Load() {
		return syscall.EIO
	}
	s, errno := n.lfs.acquire(n.EmbeddedInode(), n.backingPath())
	if errno != 0 {
		return errno
	}
	defer n.lfs.release(n.ino(), s)
	if h, ok := f.(*handle); ok && h.st == s {
		// Data written through this handle was dropped by a cut: say so once, as Linux reports a
		// failed writeback once per open file, rather than let this fsync vouch for it.
		s.mu.Lock()
		lost := h.seenCuts != s.cuts
		h.seenCuts = s.cuts
		s.mu.Unlock()
		if lost {
			return syscall.EIO
		}
	}
	return fs.ToErrno(n.lfs.syncState(s))
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, _, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return &dirHandle{fh}, 0, 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if errno := n.lfs.changeErr(false); errno != 0 {
		return errno
	}
	ch := n.GetChild(name)
	errno := n.LoopbackNode.Unlink(ctx, name)
	if errno == 0 && ch != nil {
		n.lfs.dropIfOrphan(ch.StableAttr().Ino)
	}
	return errno
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if errno := n.lfs.changeErr(false); errno != 0 {
		return errno
	}
	replaced := newParent.EmbeddedInode().GetChild(newName)
	errno := n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
	if errno == 0 && replaced != nil {
		n.lfs.dropIfOrphan(replaced.StableAttr().Ino)
	}
	return errno
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.lfs.changeErr(true); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Mkdir(ctx, name, mode, out)
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.lfs.changeErr(true); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.lfs.changeErr(true); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Symlink(ctx, target, name, out)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := n.lfs.changeErr(true); errno != 0 {
		return nil, errno
	}
	ch, errno := n.LoopbackNode.Link(ctx, target, name, out)
	if errno == 0 {
		n.lfs.fixSize(ch.StableAttr().Ino, &out.Attr)
	}
	return ch, errno
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if errno := n.lfs.changeErr(false); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Rmdir(ctx, name)
}

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if errno := n.lfs.changeErr(true); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Setxattr(ctx, attr, data, flags)
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if errno := n.lfs.changeErr(false); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Removexattr(ctx, attr)
}

// handle is an open file. It holds a reference on the file's state; closing persists nothing.
type handle struct {
	lfs *FS
	ino uint64
	st  *fileState
	// append: the file was opened with O_APPEND, so every write goes to the logical end. The
	// kernel's offset comes from its cached size, which a cut leaves stale until the next stat.
	append bool
	// seenCuts is the file's cut count last reported through this handle (guarded by st.mu).
	seenCuts uint64
}

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	n, err := h.st.readAt(dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	if errno := h.lfs.changeErr(true); errno != 0 {
		return 0, errno
	}
	if h.append {
		off = h.st.size
	}
	n, err := h.st.writeAt(data, off)
	if err != nil {
		return uint32(n), fs.ToErrno(err)
	}
	return uint32(n), 0
}

// Flush (every close) persists nothing: after a SIGKILL the kernel closes the dead process's files.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.lfs.release(h.ino, h.st)
	return 0
}

// dirHandle is the loopback directory stream without its Fsyncdir (see node.Fsync).
type dirHandle struct{ fh fs.FileHandle }

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.fh.(fs.FileReaddirenter).Readdirent(ctx)
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.fh.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	d.fh.(fs.FileReleasedirer).Releasedir(ctx, flags)
}
