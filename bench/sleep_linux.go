//go:build linux

package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// preciseSleep sleeps d with nanosleep(2). Go's timers wake up to about 1 ms late on Linux
// (measured here: +1.0 ms at the median for a 50 us sleep), which would show up as send delay the
// engine did not cause; nanosleep overshoots by the kernel's 50 us timer slack plus a little
// (measured: +60 us median, +120 us p99). Pinning the thread and lowering the slack made the
// median better but the tail worse on 2 cores, so it is not done.
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
