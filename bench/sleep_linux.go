//go:build linux

package bench

import (
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// wakeLateNs is how late nanosleep has been waking, a running average over every producer (the
// wake-up latency is the machine's, not a goroutine's).
var wakeLateNs atomic.Int64

const (
	// maxAnticipation bounds the estimate of the wake-up latency.
	maxAnticipation = 200 * time.Microsecond
	// spinShare bounds the share of a sleep that may be spent spinning: a sleep of d ends at
	// most d/spinShare early, so a producer spins at most 1/spinShare of its idle time and
	// leaves the CPU to the engine under test the rest of the time.
	spinShare = 8
	// timerSlackNs is the thread's timer slack while it sleeps (the kernel's default is 50 us).
	timerSlackNs = 1000
)

// preciseSleep sleeps d. Go's timers wake up about 1 ms late on Linux (measured: +1.0 ms at the
// median for a 50 us sleep), which would show up as send delay the engine did not cause, so it
// uses nanosleep(2), with three corrections, each measured at 1,000 msg/s with one producer and
// one consumer on redis-server (interleaved runs):
//
//   - It yields first. nanosleep is a system call that keeps the goroutine's P: a goroutine
//     already made runnable on that P's queue (a consumer whose reply the producer's own network
//     poll found) would wait until the sleep ends, about one message interval, unless the
//     runtime's monitor retakes the P, which it does late on an idle machine. End-to-end p90 was
//     0.44 to 1.15 ms without the yield, 0.25 to 0.32 ms with it.
//   - It lowers the thread's timer slack to 1 us (the kernel's default, 50 us, is added to every
//     sleep): send delay p50 from about 100 us to 55 us.
//   - It ends the sleep early by the wake-up latency measured so far (at most d/spinShare) and
//     yields in a loop for the rest: send delay p50 from about 55 us to 3 us.
func preciseSleep(d time.Duration) {
	deadline := time.Now().Add(d)
	runtime.Gosched()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, timerSlackNs, 0, 0, 0)
	est := time.Duration(wakeLateNs.Load())
	if s := time.Until(deadline) - min(est, d/spinShare); s > 0 {
		wakeAt := time.Now().Add(s)
		ts := unix.NsecToTimespec(int64(s))
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
		est += (time.Since(wakeAt) - est) / 8
		wakeLateNs.Store(int64(min(max(est, 0), maxAnticipation)))
	}
	for time.Now().Before(deadline) {
		runtime.Gosched()
	}
}
