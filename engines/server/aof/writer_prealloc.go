package aof

import (
	"errors"

	"qbench/engines/server/fsys"
)

// errCopyOnWrite stops preallocation on a copy-on-write file system.
var errCopyOnWrite = errors.New("the file system is copy-on-write (an overwrite allocates new blocks): zeros ahead reserve nothing")

// Preallocation. An fdatasync after an append that grew the file must also commit the new size
// to the file system's journal; after a write into blocks already written (with zeros) and
// synced it only flushes the data. On this VM's ext4 that is 1.1-1.5x the syncs per second for
// 300-byte writes and 1.3-2x for 9 KB ones. So under appendfsync always, where the file
// supports it (fsys.Preallocator: the OS file on Linux), the writer keeps zeros, written and
// synced by a goroutine of its own, ahead of the data, as PostgreSQL recycles WAL segments and
// RocksDB has recycle_log_file_num. Not under everysec or no: one fsync a second, or none,
// gains nothing, and the zeros' own fdatasyncs would make the log more durable (and the disk
// busier) than those policies promise. Close and Rotate cut the zeros off; a crash leaves them, and
// replay takes a zero-filled tail after the last record as the end of the log (Scan, Replay).
//
// The zeros must never cost a write the disk had room for (a 2 MB volume filled with 8 MB of
// zeros failed the next append under always after 23 writes of 1 KB, where Redis took 2,018).
// So an extension is bounded by the free space (fsys.SpaceReporter, statfs): it takes at most
// 1/preShare of the bytes available then, in whole pieces, and none when that is less than a
// piece, trying again once the data has moved a piece on. Zeros once written are allocated
// blocks: writes into them cannot get ENOSPC. The writes that can are those into the gap of
// up to a piece between the data and the zeros (plain appends, as Redis's are), and with at
// most 1/preShare of the free space taken, the other (preShare-1)/preShare are left for them.
// On copy-on-write file systems (btrfs, ZFS) an overwrite allocates anew, so the zeros
// would reserve nothing and save no journal commit: no preallocation there.
const (
	preChunk = 8 << 20   // zeros written by one extension, at most
	prePiece = 256 << 10 // and synced a piece at a time
	preLow   = 4 << 20   // extend when less than this is left ahead of the data
	preShare = 8         // an extension takes at most this fraction of the free space
)

// preBudget is how many bytes of zeros an extension may write when avail bytes are free: at
// most preChunk and avail/preShare, in whole pieces (0: none now).
func preBudget(avail int64) int64 {
	n := min(int64(preChunk), avail/preShare)
	return n - n%prePiece
}

// prepareLocked makes sure the write of the buffer does not overlap zeros being written now,
// waiting for them if it would, and starts the next extension when little is left ahead.
// w.mu held; the caller takes the buffer before releasing it.
func (w *Writer) prepareLocked() {
	end := w.size + int64(len(w.buf))
	for w.extending && end > w.extFrom {
		w.cond.Wait()
		end = w.size + int64(len(w.buf)) // records appended meanwhile go in this write too
	}
	if w.pre == nil || w.policy != Always || w.extending || w.dead || w.prepEnd-end >= preLow || end < w.preRetry {
		return
	}
	// Past a piece of room, so the writes that come while the first piece is written do not
	// wait for it (they fill the gap as plain writes).
	from := max(w.prepEnd, end+prePiece)
	w.extending, w.extFrom, w.zeroed = true, from, true
	go w.extend(w.f, w.pre, from)
}

// extend writes and syncs preChunk zeros at from, a piece at a time; the log may write over
// each piece once it is synced (extFrom is where the piece being written starts). An error
// only stops the preallocation: the log's own descriptor still sees any writeback error
// (fsys.Preallocator).
func (w *Writer) extend(f fsys.File, pre fsys.Preallocator, from int64) {
	n, err := int64(preChunk), error(nil)
	if sr, ok := pre.(fsys.SpaceReporter); ok {
		avail, cow, serr := sr.Space()
		switch {
		case serr != nil:
			err = serr
		case cow:
			err = errCopyOnWrite
		default:
			n = preBudget(avail)
		}
		if err == nil && n == 0 {
			w.mu.Lock()
			w.preRetry = from // the data's end then, or further: once the data gets there
			if !w.preLowSpace && f == w.f {
				w.preLowSpace = true
				w.logf("AOF preallocation paused: %d bytes free, less than %d pieces of %d bytes (appends grow the file, as Redis's do)", avail, preShare, prePiece)
			}
			w.extending = false
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
	}
	if err == nil {
		w.mu.Lock()
		if w.preLowSpace && f == w.f {
			w.preLowSpace = false
			w.logf("AOF preallocation resumed: %d bytes ahead", n)
		}
		w.mu.Unlock()
	}
	for off := from; err == nil && off < from+n; off += prePiece {
		if err = pre.Preallocate(off, prePiece); err != nil {
			break
		}
		w.mu.Lock()
		stop := f != w.f || w.dead
		if !stop {
			w.extFrom, w.prepEnd = off+prePiece, off+prePiece
			w.st.Preallocated = w.prepEnd
		}
		w.cond.Broadcast()
		w.mu.Unlock()
		if stop {
			break
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.extending = false
	w.cond.Broadcast()
	if err != nil && f == w.f && !w.dead {
		w.pre = nil
		w.logf("AOF preallocation stopped (appends go on growing the file): %s", errText(err))
	}
}

// settleLocked waits for a write and an extension in progress. w.mu held.
func (w *Writer) settleLocked() {
	for w.flushing || w.extending {
		w.cond.Wait()
	}
}

// trimLocked cuts the zeros past the data off the current file and makes that durable, so the
// file ends at its last record again (before Close, and before Rotate leaves the file behind).
// w.mu held, no flush or extension running.
func (w *Writer) trimLocked() error {
	if !w.zeroed {
		return nil
	}
	if err := w.f.Truncate(w.size); err != nil {
		return err
	}
	w.prepEnd, w.zeroed = w.size, false
	return w.f.Sync()
}

// setFileLocked makes f (size bytes long) the current file. w.mu held.
func (w *Writer) setFileLocked(f fsys.File, size int64) {
	w.f, w.size, w.syncedSize, w.prepEnd, w.zeroed = f, size, size, size, false
	w.preRetry = 0
	w.st.Preallocated = 0
	w.pickPreallocatorLocked()
}

// pickPreallocatorLocked sets pre: the current file's Preallocator if preallocation is on.
func (w *Writer) pickPreallocatorLocked() {
	w.pre = nil
	if p, ok := w.f.(fsys.Preallocator); ok && w.prealloc {
		w.pre = p
	}
}
