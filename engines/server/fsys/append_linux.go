package fsys

import (
	"io"
	"os"
	"syscall"
)

// openAppend opens name for writing at its end without O_APPEND: with O_APPEND every write
// would land after the zeros Preallocate wrote past the data. Truncate moves the offset back to
// the new end, so the file still behaves as an append-only one.
func openAppend(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return osFile{f}, nil
}

// Truncate cuts the file to size and puts the write offset there.
func (f osFile) Truncate(size int64) error {
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	_, err := f.Seek(size, io.SeekStart)
	return err
}

// zeroBlock is what Preallocate writes, a block at a time.
var zeroBlock [256 << 10]byte

// Preallocate writes zeros at [off, off+n) and makes them durable, through a descriptor of its
// own (Preallocator). Its own: since Linux 4.13 a writeback error is reported once to every
// open file description (errseq), so an error this fdatasync sees, even one on the log's own
// pages, is still reported to the log's next fdatasync, and an error here only stops the
// preallocation. The log's write offset does not move.
func (f osFile) Preallocate(off, n int64) error {
	z, err := os.OpenFile(f.Name(), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer z.Close()
	for end := off + n; off < end; {
		k := min(end-off, int64(len(zeroBlock)))
		if _, err := z.WriteAt(zeroBlock[:k], off); err != nil {
			return err
		}
		off += k
	}
	return osFile{z}.datasync(false)
}

// Copy-on-write file systems (statfs f_type): an overwrite allocates new blocks there, so
// zeros written ahead neither save the journal commit nor reserve the space.
const (
	btrfsMagic = 0x9123683e
	zfsMagic   = 0x2fc12fc1
)

// Space reports the bytes available to unprivileged writers on the file's file system, and
// whether it is copy-on-write (SpaceReporter).
func (f osFile) Space() (avail int64, cow bool, err error) {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return 0, false, err
	}
	return int64(st.Bavail) * int64(st.Bsize), st.Type == btrfsMagic || st.Type == zfsMagic, nil
}
