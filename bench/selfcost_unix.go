//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTimes is the process's user and system CPU time so far (getrusage RUSAGE_SELF: every
// thread, finished ones included).
func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
