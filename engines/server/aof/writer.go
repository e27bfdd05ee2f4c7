package aof

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"qbench/engines/server/fsys"
)

// Policy is appendfsync.
type Policy int

const (
	Always   Policy = iota // fsync before any reply that depends on the write
	EverySec               // write before replying; fsync in the background once a second
	No                     // write before replying; never fsync (the OS decides)
)

// ParsePolicy parses Redis's appendfsync values.
func ParsePolicy(s string) (Policy, bool) {
	switch s {
	case "always":
		return Always, true
	case "everysec":
		return EverySec, true
	case "no":
		return No, true
	}
	return 0, false
}

func (p Policy) String() string { return [...]string{"always", "everysec", "no"}[p] }

// maxTail bounds the bytes kept to repair a failed fsync. Under everysec they are about a
// second of writes; under no (never fsynced but at rotation and close) they could grow without
// bound, so past this the repair is given up (and a failed fsync stays an error).
const maxTail = 64 << 20

// maxYields bounds how often a group-commit leader lets other connections add records before
// it writes and fsyncs.
const maxYields = 4

// ErrKilled is returned to writers waiting on a log that a simulated crash killed.
var ErrKilled = errors.New("aof: log killed (simulated crash)")

// Writer appends records to the current incremental file with group commit: records are
// appended to a memory buffer under the caller's lock (in execution order); a connection that
// needs its records on disk calls Commit, and whichever caller finds no write in progress
// becomes the leader and writes (and under always, fsyncs) everything buffered so far for all
// waiting connections at once.
type Writer struct {
	fs       fsys.FS
	interval time.Duration // everysec period

	mu       sync.Mutex
	cond     *sync.Cond
	policy   Policy
	f        fsys.File
	size     int64 // bytes in the current file, written
	buf      []byte
	spare    []byte
	bufRecs  int64
	appended int64 // logical bytes ever appended (across files)
	written  int64
	synced   int64
	flushing bool
	waiting  int       // Commit callers in cond.Wait
	shared   bool      // another caller waited on the last flush: more may join the next one
	bgSync   bool      // a background fsync is running
	bgStart  time.Time // when it started
	err      error     // sticky write/fsync error
	errSync  bool      // the sticky error came from an fsync
	dead     bool
	fatal    bool // an error under always: permanent (the server exits, as Redis does)

	// tail is every byte written to the current file since the last fsync that succeeded, and
	// syncedSize the file's size then. After a failed fsync Linux drops the dirty pages and the
	// next fsync returns 0, so these bytes are never counted as synced until they have been
	// written again (the file truncated to syncedSize, the tail re-appended) and fsynced.
	tail       []byte
	tailLost   bool // the tail outgrew maxTail (policy no): a failed fsync cannot be repaired
	syncedSize int64
	syncGen    int64 // bumped when tail is rewritten, so a background fsync's result is not misapplied

	// Preallocation (writer_prealloc.go): [size, prepEnd) of the current file holds zeros
	// already synced; pre is the file's fsys.Preallocator (nil: none, or prealloc off);
	// extending says a goroutine is writing zeros from extFrom on.
	prealloc  bool
	pre       fsys.Preallocator
	prepEnd   int64
	zeroed    bool // zeros may lie past size in the current file (trimLocked)
	extending bool
	extFrom   int64
	// preRetry: too little free space for an extension; none until the data reaches it.
	// preLowSpace: that was logged.
	preRetry    int64
	preLowSpace bool

	// Logf logs errors and recoveries with Redis's lines; nil = silent. OnFatal runs (without
	// w.mu) once an error under always makes the log unrecoverable.
	Logf    func(format string, args ...any)
	OnFatal func(err error)
	lastLog time.Time

	st Stats
}

// Stats are the writer's counters for INFO persistence.
type Stats struct {
	Fsyncs         int64 // completed fsyncs of the log
	SyncedRecords  int64 // records covered by those fsyncs (always) or by background ones
	WrittenRecords int64
	Writes         int64 // write calls
	DelayedFsync   int64 // aof_delayed_fsync
	LastWriteErr   error
	Errors         int64 // write and fsync errors seen (each failed attempt)
	PendingBytes   int64 // aof_buffer_length
	BgSyncRunning  bool
	CurrentSize    int64
	Preallocated   int64 // the current file's end of preallocated zeros (0: none)
}

// NewWriter returns a writer appending to f (already positioned at its end, size bytes long).
// interval is the everysec period; 0 means one second. It preallocates where f can
// (writer_prealloc.go) unless SetPreallocate(false).
func NewWriter(fs fsys.FS, f fsys.File, size int64, policy Policy, interval time.Duration) *Writer {
	if interval == 0 {
		interval = time.Second
	}
	w := &Writer{fs: fs, policy: policy, interval: interval, prealloc: true}
	w.cond = sync.NewCond(&w.mu)
	w.setFileLocked(f, size)
	return w
}

// SetPreallocate turns preallocation on or off for later extensions.
func (w *Writer) SetPreallocate(on bool) {
	w.mu.Lock()
	w.prealloc = on
	w.pickPreallocatorLocked()
	w.mu.Unlock()
}

// Append buffers one record and returns the log position just past it. Call it in execution
// order (the server calls it under the store lock).
func (w *Writer) Append(r Record) int64 {
	w.mu.Lock()
	n := len(w.buf)
	w.buf = AppendRecord(w.buf, r)
	w.appended += int64(len(w.buf) - n)
	w.bufRecs++
	end := w.appended
	w.mu.Unlock()
	return end
}

// End is the position just past the last appended record.
func (w *Writer) End() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.appended
}

// Err is the sticky write error, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// SetPolicy changes appendfsync.
func (w *Writer) SetPolicy(p Policy) {
	w.mu.Lock()
	w.policy = p
	w.mu.Unlock()
}

// Commit returns once everything up to end is stored as the policy promises: written to the
// file (everysec, no) or written and fsynced (always). It returns the sticky error instead if
// the data could not be stored; the caller must then not acknowledge it.
func (w *Writer) Commit(end int64) error { return w.commit(end, false) }

// CommitInline is Commit for the server's event loop: a caller whose goroutine nothing else
// waits for while it commits. Its fsync keeps the caller's processor (fsys.InlineSyncer), so
// the scheduler neither hands it to another thread nor wakes one around every sync. With a
// single processor it is Commit: everything else would stall for the disk.
func (w *Writer) CommitInline(end int64) error {
	return w.commit(end, runtime.GOMAXPROCS(0) >= 2)
}

func (w *Writer) commit(end int64, inline bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	yields, lastRecs := 0, int64(0)
	for {
		if w.dead {
			return ErrKilled
		}
		if w.err != nil {
			return w.err
		}
		done := w.written >= end
		if w.policy == Always {
			done = w.synced >= end
		}
		if done {
			return nil
		}
		if !w.flushing {
			if w.policy == Always && w.shared && yields < maxYields && w.bufRecs > lastRecs {
				// Let the connections the last fsync released run first while they keep adding
				// records: their next commands join this fsync instead of waiting for another.
				// Only when others share the log: a lone committer (the event loop, which
				// already batches a whole turn, or a single connection) would pay a scheduler
				// round trip, a quarter of its CPU under always, for nothing.
				yields++
				lastRecs = w.bufRecs
				w.mu.Unlock()
				runtime.Gosched()
				w.mu.Lock()
				continue
			}
			w.flushLocked(w.policy == Always, inline)
			continue
		}
		w.waiting++
		w.cond.Wait()
		w.waiting--
	}
}

// flushLocked writes the buffer (and fsyncs if sync, inline: without the scheduler's hand-off)
// with w.mu released during the I/O. On failure the data stays buffered and the error becomes
// sticky; under always it is fatal.
func (w *Writer) flushLocked(sync, inline bool) {
	w.flushing = true
	w.prepareLocked()
	buf, recs, target := w.buf, w.bufRecs, w.appended
	w.buf, w.spare, w.bufRecs = w.spare[:0], nil, 0
	f, size := w.f, w.size
	w.mu.Unlock()

	var err error
	n := 0
	if len(buf) > 0 {
		n, err = f.Write(buf)
		if err == nil && n < len(buf) {
			err = errors.New("short write")
		}
		if err != nil && n > 0 {
			// Take the partial record back out, as Redis does, so the file stays clean.
			if terr := f.Truncate(size); terr == nil {
				n = 0
			}
		}
	}
	errSync := false
	if err == nil && sync {
		if is, ok := f.(fsys.InlineSyncer); ok && inline {
			err = is.SyncInline()
		} else {
			err = f.Sync()
		}
		errSync = err != nil
	}

	w.mu.Lock()
	w.flushing = false
	w.shared = w.waiting > 0
	w.st.Writes++
	w.keepTail(buf[:n])
	switch {
	case errSync:
		// The bytes reached the file but their fsync failed: they count as written (the repair
		// in Retry writes them again from the tail), never as synced.
		w.size += int64(len(buf))
		w.written = target
		w.st.WrittenRecords += recs
		w.failLocked(err, true)
	case err != nil:
		// Keep what did not reach the file buffered, in front of what came meanwhile: a later
		// successful write completes a short one, so the file stays a clean sequence of frames.
		w.size += int64(n)
		w.prepEnd = min(w.prepEnd, w.size) // the truncation took the zeros past size too
		w.buf = append(buf[n:len(buf):len(buf)], w.buf...)
		w.bufRecs += recs
		w.failLocked(err, false)
	default:
		w.size += int64(len(buf))
		w.written = target
		w.st.WrittenRecords += recs
		if sync {
			w.syncedLocked(target, w.size)
			w.st.Fsyncs++
			w.st.SyncedRecords += recs
		}
		w.spare = buf[:0]
	}
	w.cond.Broadcast()
}

// keepTail records bytes written since the last successful fsync (w.mu held). Under no there
// is no fsync to repair, and the tail would only grow.
func (w *Writer) keepTail(b []byte) {
	if w.tailLost || len(b) == 0 {
		return
	}
	if w.policy == No || len(w.tail)+len(b) > maxTail {
		w.tail, w.tailLost = nil, true
		return
	}
	w.tail = append(w.tail, b...)
}

// syncedLocked records a successful fsync covering the log up to pos, the file up to size.
func (w *Writer) syncedLocked(pos, size int64) {
	w.synced = max(w.synced, pos)
	if size <= w.syncedSize {
		return
	}
	if w.tailLost {
		if size == w.size { // everything in the file is synced: nothing left to repair
			w.tail, w.tailLost = nil, false
		}
	} else if k := min(int(size-w.syncedSize), len(w.tail)); k == len(w.tail) {
		w.tail = w.tail[:0]
	} else {
		w.tail = w.tail[k:]
	}
	w.syncedSize = size
}

// failLocked makes err sticky and logs it with Redis's words. Under always it is fatal: a reply
// may already depend on the data (or a reader may have seen it), so Redis exits.
func (w *Writer) failLocked(err error, errSync bool) {
	w.st.Errors++
	w.err, w.errSync = err, w.errSync || errSync
	w.st.LastWriteErr = err
	if w.policy == Always && !w.fatal {
		w.fatal = true
		if errSync {
			w.logf("Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. Exiting...", errText(err))
		} else {
			w.logf("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
		}
		if w.OnFatal != nil {
			fn := w.OnFatal
			w.mu.Unlock()
			fn(err)
			w.mu.Lock()
		}
		return
	}
	// Redis logs write errors at most every 30 seconds (AOF_WRITE_LOG_ERROR_RATE).
	if time.Since(w.lastLog) >= 30*time.Second {
		w.lastLog = time.Now()
		if errSync {
			w.logf("Fail to fsync the AOF file: %s", errText(err))
		} else {
			w.logf("Error writing to the AOF file: %s", errText(err))
		}
	}
}

func (w *Writer) logf(format string, args ...any) {
	if w.Logf != nil {
		w.Logf(format, args...)
	}
}

// errText is the system error's text as strerror gives it ("Input/output error").
func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if s := errno.Error(); s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// Retry tries again after an error (not under always, where errors are fatal). After a write
// error it writes what is still buffered. After an fsync error the pages may be gone although
// the next fsync would succeed, so it first repairs the file: truncate to the size of the last
// good fsync, append the tail again, fsync. Only then is the error cleared.
func (w *Writer) Retry() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil || w.dead || w.flushing || w.bgSync || w.extending || w.fatal {
		return w.err
	}
	if w.errSync {
		if w.tailLost {
			return w.err
		}
		w.flushing = true
		f, base, tail := w.f, w.syncedSize, w.tail
		w.syncGen++
		w.mu.Unlock()
		err := f.Truncate(base)
		if err == nil && len(tail) > 0 {
			var n int
			n, err = f.Write(tail)
			if err == nil && n < len(tail) {
				err = errors.New("short write")
			}
		}
		if err == nil {
			err = f.Sync()
		}
		w.mu.Lock()
		w.flushing = false
		w.cond.Broadcast()
		if err != nil {
			w.err = err
			w.st.LastWriteErr = err
			return err
		}
		w.size = base + int64(len(tail))
		w.syncedSize, w.prepEnd = w.size, w.size
		w.synced = w.written
		w.tail = w.tail[:0:0]
		w.st.Fsyncs++
	}
	w.err, w.errSync = nil, false
	w.logf("AOF write error looks solved, Redis can write again.")
	if len(w.buf) > 0 {
		w.flushLocked(w.policy == Always, false)
	}
	return w.err
}

// Tick is the everysec timer's work (and the error retry): call it once per interval. It starts
// a background fsync if data was written since the last one, and counts aof_delayed_fsync when
// the previous background fsync is still running after two intervals.
func (w *Writer) Tick(now time.Time) {
	w.Retry()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dead || w.err != nil {
		return
	}
	if w.policy == No {
		// Still write what is buffered (nothing waits on it otherwise).
		if len(w.buf) > 0 && !w.flushing {
			w.flushLocked(false, false)
		}
		return
	}
	if w.policy != EverySec {
		return
	}
	if w.bgSync {
		if now.Sub(w.bgStart) >= 2*w.interval {
			w.st.DelayedFsync++
		}
		return
	}
	if len(w.buf) > 0 && !w.flushing {
		w.flushLocked(false, false)
	}
	if w.written <= w.synced {
		return
	}
	w.bgSync, w.bgStart = true, now
	target, recs, f, size, gen := w.written, w.st.WrittenRecords, w.f, w.size, w.syncGen
	go func() {
		err := f.Sync()
		w.mu.Lock()
		defer w.mu.Unlock()
		w.bgSync = false
		if w.dead {
			w.cond.Broadcast()
			return
		}
		if err != nil {
			w.failLocked(err, true)
		} else if target > w.synced && gen == w.syncGen && f == w.f {
			w.st.SyncedRecords = recs // everything written before this fsync began
			w.syncedLocked(target, size)
			w.st.Fsyncs++
		}
		w.cond.Broadcast()
	}()
}

// Sync writes and fsyncs everything appended so far, whatever the policy.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.dead {
			return ErrKilled
		}
		if w.err != nil {
			return w.err
		}
		if w.flushing || w.bgSync {
			w.cond.Wait()
			continue
		}
		if w.synced >= w.appended {
			return nil
		}
		w.flushLocked(true, false)
	}
}

// Rotate makes everything appended so far durable in the current file, then switches to f
// (size bytes long) for later records. The caller holds the lock that orders Appends, so no
// record lands between the two files' contents.
func (w *Writer) Rotate(f fsys.File, size int64) (old fsys.File, err error) {
	if err := w.Sync(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.settleLocked()
	if err := w.trimLocked(); err != nil {
		return nil, err // the log carries on in this file
	}
	old = w.f
	w.setFileLocked(f, size)
	w.tail, w.tailLost = nil, false
	w.syncGen++
	return old, nil
}

// Kill simulates a crash: it waits for I/O in progress (a write or fsync the kernel had begun
// completes), then drops whatever is still buffered and fails every later call. The file is left
// as the crash would leave it.
func (w *Writer) Kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dead = true
	for w.flushing || w.bgSync || w.extending {
		w.cond.Wait()
	}
	w.buf = nil
	w.cond.Broadcast()
}

// Close writes and fsyncs what is buffered and closes the file.
func (w *Writer) Close() error {
	err := w.Sync()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dead {
		return nil
	}
	w.settleLocked()
	if err == nil {
		err = w.trimLocked()
	}
	w.dead = true
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Stats returns a copy of the counters.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.PendingBytes = int64(len(w.buf))
	st.BgSyncRunning = w.bgSync
	st.CurrentSize = w.size
	if w.err != nil {
		st.LastWriteErr = w.err
	} else {
		st.LastWriteErr = nil
	}
	return st
}
