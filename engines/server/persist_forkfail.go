package server

// What Redis 7.0.15 does when fork() fails, for the fork-failure fault. This server does not
// fork: a background job is a goroutine. DEBUG FORK-FAIL 1 makes every background job fail at
// the point where Redis's fork would, with Redis's log line, status and reply, until DEBUG
// FORK-FAIL 0.
//
// Redis (rdb.c rdbSaveBackground, aof.c rewriteAppendOnlyFileBackground) on a failed fork:
//   - BGSAVE, a save rule or a scheduled BGSAVE: logs "Can't save in background: fork:
//     <strerror>", sets lastbgsave_status to err (INFO rdb_last_bgsave_status:err, so writes
//     are refused with -MISCONF under stop-writes-on-bgsave-error yes while save rules are set)
//     and lastbgsave_try to now (the save rules wait CONFIG_BGSAVE_RETRY_DELAY, 5 s, before the
//     next try); BGSAVE replies a bare "-ERR". A scheduled BGSAVE stays scheduled.
//   - BGREWRITEAOF or the automatic rewrite: after opening the new incremental file, logs
//     "Can't rewrite append only file in background: fork: <strerror>" and sets
//     aof_lastbgrewrite_status to err (which refuses no writes); BGREWRITEAOF replies "ERR Can't
//     execute an AOF background rewriting. ...". A scheduled rewrite stays scheduled, retried by
//     the cron; aof_rewrites_consecutive_failures does not count it (only a child's failure does).
//
// The error is ENOMEM ("Cannot allocate memory"), what fork() returns when the kernel will not
// commit memory for a copy of a large parent (vm.overcommit_memory 2, or 0 and a heuristic
// refusal), the usual cause in production.

import (
	"errors"
	"syscall"
	"time"
)

// errForkFailed is the error of a background job that could not start under DEBUG FORK-FAIL.
var errForkFailed = &forkError{syscall.ENOMEM}

// forkError is a failed fork: the job never started.
type forkError struct{ errno syscall.Errno }

func (e *forkError) Error() string { return "fork: " + strerror(e.errno) }

// isForkError reports whether err is a failed fork.
func isForkError(err error) bool {
	var fe *forkError
	return errors.As(err, &fe)
}

// forkBgsave is the failed fork of a background save: Redis's parent side. Store lock held.
func (p *persistence) forkBgsave() error {
	p.lastBgsaveTry = time.Now()
	p.lastBgsaveOK = false
	p.s.logf("Can't save in background: %v", errForkFailed)
	return errForkFailed
}

// forkRewrite is the failed fork of a log rewrite. Store lock held.
func (p *persistence) forkRewrite() error {
	p.lastRewriteOK = false
	p.s.logf("Can't rewrite append only file in background: %v", errForkFailed)
	return errForkFailed
}
