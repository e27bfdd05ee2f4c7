package fsys

import (
	"os"
	"syscall"
)

// osFile syncs with fdatasync(2), as Redis does on Linux: the data and the size, not the
// timestamps, so an append costs one journal commit less than fsync(2).
type osFile struct{ *os.File }

func (f osFile) Sync() error { return f.datasync(false) }

// SyncInline is Sync for a caller that keeps its processor while the disk works (InlineSyncer).
// A blocking system call normally enters the scheduler's syscall state: once it has lasted
// 20 us the runtime's monitor hands the goroutine's P to another thread (waking one), and on
// return the caller takes a P back. Around a 0.3 ms fdatasync that is a hand-off, thread
// wake-ups and the monitor's sleeps for every sync. RawSyscall skips the syscall state: the P
// stays with the caller, blocked in the kernel, and nothing else is woken. The price: a garbage
// collector's stop-the-world waits until the sync returns, as it would for a goroutine running.
func (f osFile) SyncInline() error { return f.datasync(true) }

func (f osFile) datasync(inline bool) error {
	fd := f.Fd()
	for {
		var err error
		if inline {
			if _, _, e := syscall.RawSyscall(syscall.SYS_FDATASYNC, fd, 0, 0); e != 0 {
				err = e
			}
		} else {
			err = syscall.Fdatasync(int(fd))
		}
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
