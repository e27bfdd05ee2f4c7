//go:build unix

package server

import (
	"fmt"
	"syscall"
)

// reservedFDs is Redis's CONFIG_MIN_RESERVED_FDS: descriptors kept for the listener, log
// files, snapshots and the like, beyond one per client.
const reservedFDs = 32

// adjustOpenFilesLimit is Redis's: make room for maxclients descriptors (plus the reserve) by
// raising the soft limit (and the hard one, where allowed), stepping down 16 at a time when the
// system refuses; if what it gets is still short, lower maxclients to fit, so the server keeps
// serving instead of failing accept with EMFILE. It returns the maxclients to use.
func adjustOpenFilesLimit(maxClients int, logf func(string, ...any)) (int, error) {
	maxFiles := uint64(maxClients) + reservedFDs
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		logf("Unable to obtain the current NOFILE limit (%v), assuming 1024 and setting the max clients configuration accordingly.", err)
		return max(1, 1024-reservedFDs), nil
	}
	old := lim.Cur
	if old >= maxFiles {
		return maxClients, nil
	}
	best := maxFiles
	var setErr error
	for best > old {
		nl := syscall.Rlimit{Cur: best, Max: max(lim.Max, best)}
		if setErr = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &nl); setErr == nil {
			break
		}
		if best < 16 {
			break
		}
		best -= 16
	}
	if best < old {
		best = old
	}
	if best >= maxFiles {
		logf("Increased maximum number of open files to %d (it was originally set to %d).", maxFiles, old)
		return maxClients, nil
	}
	if best <= reservedFDs {
		return 0, fmt.Errorf("Your current 'ulimit -n' of %d is not enough for the server to start. Please increase your open file limit to at least %d. Exiting.", old, maxFiles)
	}
	reduced := int(best) - reservedFDs
	logf("You requested maxclients of %d requiring at least %d max file descriptors.", maxClients, maxFiles)
	logf("Server can't set maximum open files to %d because of OS error: %v.", maxFiles, setErr)
	logf("Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", best, reduced)
	return reduced, nil
}
