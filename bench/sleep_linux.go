//go:build linux

package bench

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// preciseSleep sleeps d with nanosleep(2). Go's timers wake up to about 1 ms late on Linux
// (measured here: +1.0 ms at the median for a 50 us sleep), which would show up as send delay the
// engine did not cause; nanosleep overshoots by the kernel's 50 us timer slack plus a little
// (measured: +60 us median, +120 us p99). Pinning the thread and lowering the slack made the
// median better but the tail worse on 2 cores, so it is not done.
//
// It yields first. nanosleep is a system call that keeps the goroutine's P: a goroutine already
// made runnable on that P's queue (a consumer whose reply the producer's own network poll found)
// would wait until the sleep ends, about one message interval, unless the runtime's monitor
// retakes the P, which it does late on an idle machine. That added about a millisecond to end-to-
// end latency at p90 (1,000 msg/s, one producer and one consumer on redis-server: e2e p90 0.44 to
// 1.15 ms without the yield, 0.25 to 0.32 ms with it, in interleaved runs).
func preciseSleep(d time.Duration) {
	runtime.Gosched()
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
