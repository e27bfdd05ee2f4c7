package server

// The log path of every write command: the clock frozen per command, records appended (or
// collected for EXEC), and the reply held until appendfsync's promise is kept.

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
	"qbench/engines/server/resp"
)

// beginCmd freezes the clock for a command; endCmd releases it. The records an EXEC produces
// are collected and logged as one. Store lock held.
func (p *persistence) beginCmd(cmd *command) {
	if p.depth == 0 {
		if p.inTurn {
			p.cmdTime = p.turnTime
		} else {
			p.cmdTime = p.clock()
		}
		p.inExec = cmd.name == "exec"
	}
	p.depth++
}

// startTurn reads the clock for the event loop's turn (cmdClock) and returns it; endTurn
// returns to one reading per command. Store lock held, from taking it to releasing it: a
// command served on a goroutine in between reads its own, later, time.
func (p *persistence) startTurn() time.Time {
	p.turnTime, p.inTurn = p.clock(), true
	return p.turnTime
}

func (p *persistence) endTurn() { p.inTurn = false }

func (p *persistence) endCmd() {
	p.depth--
	if p.depth > 0 || !p.inExec {
		return
	}
	p.inExec = false
	switch {
	case len(p.multi) == 1:
		r, _ := aof.DecodePayload(p.multi[0])
		p.append(r)
	case len(p.multi) > 1:
		p.append(aof.Record{Kind: aof.KindMulti, TimeMs: p.cmdTime.UnixMilli(), Args: p.multi})
	}
	p.multi = nil
}

// append logs r, or keeps it for the EXEC that is running. Store lock held.
func (p *persistence) append(r aof.Record) {
	if p.w == nil {
		return
	}
	if p.inExec && p.depth > 0 {
		p.multi = append(p.multi, aof.AppendPayload(nil, r))
		return
	}
	p.w.Append(r)
}

// logCommand appends a write command that succeeded to the log. Store lock held.
func (p *persistence) logCommand(db int, args [][]byte) {
	p.append(aof.Record{Kind: aof.KindCommand, DB: db, TimeMs: p.cmdTime.UnixMilli(), Args: args})
}

// logServed appends a blocked command that a write just served. Store lock held.
func (p *persistence) logServed(b *blockSpec, key string) {
	if p.w == nil || b.args == nil {
		return
	}
	args := make([][]byte, 0, len(b.args)+1)
	args = append(append(args, []byte(key)), b.args...)
	p.append(aof.Record{Kind: aof.KindServed, DB: b.db, TimeMs: p.s.store.NowMs(), Args: args})
}

// batchEnd is the log position a reply computed now depends on (0 = nothing to wait for).
// Store lock held.
func (p *persistence) batchEnd() int64 {
	if p.w == nil {
		return 0
	}
	return p.w.End()
}

// commit waits until the log is stored up to end as appendfsync promises, so no reply leaves
// before what it depends on (its batch's writes, or others' writes it read). False means the
// batch's own writes (wrote) could not be stored: its replies must not be sent. A batch that
// wrote nothing still gets its replies (reads and MISCONF errors) when the log is failing.
func (p *persistence) commit(w *aof.Writer, end int64, wrote bool) bool {
	if w == nil || end == 0 {
		return true
	}
	return w.Commit(end) == nil || !wrote
}

// commitInline is commit for the event loop, the one goroutine that serves ordinary clients:
// nothing else needs its processor while it waits for the disk, so its fsync does not go
// through the scheduler's hand-off (aof.Writer.CommitInline).
//
// QBENCH_SERVER_INLINE_FSYNC=0 turns it off, for re-measuring: it cuts the scheduler's system
// calls per request (nanosleep 1.56 -> 0.33, futex 0.44 -> 0.06 at one client) and CPU, and on a
// fast disk served more requests/s; while other processes' fsyncs slowed the disk to ~1 ms per
// sync, interleaved rounds gave it 20-30% fewer requests/s than the plain commit.
func (p *persistence) commitInline(w *aof.Writer, end int64, wrote bool) bool {
	if w == nil || end == 0 {
		return true
	}
	if !inlineFsync() {
		return w.Commit(end) == nil || !wrote
	}
	return w.CommitInline(end) == nil || !wrote
}

var inlineFsync = sync.OnceValue(func() bool { return os.Getenv("QBENCH_SERVER_INLINE_FSYNC") != "0" })

// denyWrite is Redis's check before a write command (and PING) while the AOF cannot be
// written: -MISCONF with the system error.
func (p *persistence) denyWrite(cmd *command) error {
	if cmd.flags&flagWrite == 0 && cmd.name != "ping" {
		return nil
	}
	// A failed background save comes first, as in Redis's writeCommandsDeniedByDiskError.
	if p.stopWrites && len(p.rules) > 0 && !p.lastBgsaveOK {
		return redisError(errBgsaveMisconf)
	}
	if p.w == nil {
		return nil
	}
	if err := p.w.Err(); err != nil {
		return redisError("MISCONF Errors writing to the AOF file: " + strerror(err))
	}
	return nil
}

// errBgsaveMisconf is Redis 7.0.15's shared.bgsaveerr, word for word.
const errBgsaveMisconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// strerror renders err as C's strerror would ("No space left on device").
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// copyArgs copies a command's arguments out of the connection's read buffer.
func copyArgs(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// waitAOF is WAITAOF's local part: with the AOF on, everything logged so far is fsynced before
// the reply (under everysec and no too), so the answer is one local fsync and no replicas.
// Store lock held; the fsync does not need it.
func (p *persistence) waitAOF() (any, error) {
	if p.w == nil {
		return resp.Array{0, 0}, nil
	}
	if err := p.w.Sync(); err != nil {
		return nil, redisError("MISCONF Errors writing to the AOF file: " + strerror(err))
	}
	return resp.Array{1, 0}, nil
}

// newWriter opens the log writer with the server's log and its fatal-error exit.
func (p *persistence) newWriter(f fsys.File, size int64) *aof.Writer {
	w := aof.NewWriter(p.fs, f, size, p.policy, p.interval)
	w.SetPreallocate(p.s.cfg.AOFPreallocate != "no")
	w.Logf = p.s.logf
	w.OnFatal = p.s.fatal
	return w
}
