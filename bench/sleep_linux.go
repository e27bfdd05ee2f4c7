//go:build linux

package bench

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// wakeLateNs is how late a sleep has been waking, a running average over every producer (the
// wake-up latency is the machine's, not a goroutine's).
var wakeLateNs atomic.Int64

const (
	// maxAnticipation bounds the estimate of the wake-up latency.
	maxAnticipation = 200 * time.Microsecond
	// spinShare bounds the share of a sleep that may be spent spinning: a sleep of d ends at
	// most d/spinShare early, so a producer spins at most 1/spinShare of its idle time and
	// leaves the CPU to the engine under test the rest of the time.
	spinShare = 8
)

// timerFDs are idle timer file descriptors, one taken per sleep and given back after it.
var timerFDs = sync.Pool{New: func() any { return newTimerFD() }}

// timerFD is a timerfd(2) read through Go's network poller: a goroutine waiting on it is parked
// and its P is free for others, unlike one in nanosleep(2), which keeps its P for the whole
// sleep. (With several batches in flight, producers sleeping in nanosleep held both Ps of a
// 2-core machine while the replies they waited for, from a server in the same process, could not
// be read: produce p50 4 ms instead of 0.3 ms in the quickstart.) The timer fires with the
// kernel's high-resolution clock, not Go's millisecond-grained timers.
//
// The timer is read with a raw system call through the file's RawConn: a read through
// syscall.Syscall wakes the runtime's monitor thread (sysmon), asleep while every P is idle,
// which at 1,000 msg/s is a futex wake and a few of sysmon's 20 us nanosleeps per message, on
// the vCPU the server needs. The read never blocks (the timer is non-blocking; the poller waits).
type timerFD struct {
	fd     int
	file   *os.File
	raw    syscall.RawConn
	buf    [8]byte
	errno  syscall.Errno
	readFn func(fd uintptr) bool
}

func newTimerFD() *timerFD {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	t := &timerFD{fd: fd, file: os.NewFile(uintptr(fd), "timerfd")}
	if t.raw, err = t.file.SyscallConn(); err != nil {
		t.file.Close()
		return nil
	}
	t.readFn = t.rawRead
	return t
}

// rawRead reads the expiration count once: done unless the timer has not fired (EAGAIN).
func (t *timerFD) rawRead(fd uintptr) bool {
	for {
		_, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&t.buf[0])), uintptr(len(t.buf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		t.errno = e
		return true
	}
}

// sleep waits d on the timer; false if the timer could not be used.
func (t *timerFD) sleep(d time.Duration) bool {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil { // a raw system call
		return false
	}
	t.errno = 0
	return t.raw.Read(t.readFn) == nil && t.errno == 0
}

// preciseSleep sleeps d. Go's timers wake up about 1 ms late on Linux (measured: +1.0 ms at the
// median for a 50 us sleep), which would show up as send delay the engine did not cause, so it
// waits on a timerfd through the network poller (see timerFD), with two corrections, each
// measured at 1,000 msg/s with one producer and one consumer on redis-server (interleaved runs):
//
//   - It parks rather than sleeping in a system call that keeps its P: a goroutine already
//     runnable on that P's queue (a consumer whose reply the producer's own network poll found)
//     would otherwise wait until the sleep ends, about one message interval. End-to-end p90 was
//     0.44 to 1.15 ms with nanosleep alone, 0.25 to 0.32 ms once the producer yielded first.
//   - It ends the sleep early by the wake-up latency measured so far (at most d/spinShare) and
//     spins (yielding) for the rest: send delay p50 from about 55-100 us to a few us.
func preciseSleep(d time.Duration) { preciseSleepYield(d, true, nil) }

// preciseSleepYield is preciseSleep whose last stretch yields the P (runtime.Gosched) only when
// asked to or when there is one P. Yielding lets goroutines readied on this P run (a busy
// producer's answers, consumers), but each Gosched with an idle P wakes an idle thread to look
// for work (wakep): about half a futex wake per message at 1,000 msg/s with nothing to run. The
// producer asks to yield only while it has batches in flight (produce.go). A sleep taken records
// its lateness, lead and spin in st (nil: none).
func preciseSleepYield(d time.Duration, yield bool, st *pacerStats) {
	deadline := time.Now().Add(d)
	est := time.Duration(wakeLateNs.Load())
	lead := min(est, d/spinShare)
	var wokeAt time.Time
	var late time.Duration
	slept := false
	if s := time.Until(deadline) - lead; s > 0 {
		wakeAt := time.Now().Add(s)
		if !sleepOn(s) {
			runtime.Gosched()
			ts := unix.NsecToTimespec(int64(s))
			for unix.Nanosleep(&ts, &ts) == unix.EINTR {
			}
		}
		wokeAt = time.Now()
		late, slept = wokeAt.Sub(wakeAt), true
		est += (late - est) / 8
		wakeLateNs.Store(int64(min(max(est, 0), maxAnticipation)))
	}
	yield = yield || runtime.GOMAXPROCS(0) == 1
	now := time.Now()
	for now.Before(deadline) {
		if yield {
			runtime.Gosched()
		}
		now = time.Now()
	}
	if slept {
		st.precise(wokeAt, late, lead, now.Sub(wokeAt))
	}
}

// coarseSleep sleeps about d on a timerfd, without preciseSleep's early wake and spin: for a
// sleep at whose end no message is due (a coalesced sleep, produce.go), waking late only adds
// to the batch, and the spin (up to d/spinShare, yielding) would be CPU spent on nothing. Its
// lateness goes to st (nil: nowhere).
func coarseSleep(d time.Duration, st *pacerStats) {
	asked := time.Now().Add(d)
	if !sleepOn(d) {
		preciseSleepYield(d, true, nil)
		return
	}
	if st != nil {
		now := time.Now()
		st.coarse(now, now.Sub(asked))
	}
}

// sleepOn sleeps s on a pooled timerfd; false when none can be had.
func sleepOn(s time.Duration) bool {
	t, _ := timerFDs.Get().(*timerFD)
	if t == nil {
		return false
	}
	ok := t.sleep(s)
	if ok {
		timerFDs.Put(t)
	} else {
		t.file.Close()
	}
	return ok
}

// handoff runs fn when a timer armed by arm expires before disarm, for a producer that keeps
// the schedule through its Send (produce.go). It waits on a timerfd of its own in a goroutine
// parked on the network poller: arming and disarming are raw system calls that wake nobody,
// where a Go timer armed per message (time.AfterFunc) woke an idle thread to watch it
// (wakeNetPoller), a fifth of a futex wake per message at 1,000 msg/s.
type handoff struct {
	t  *timerFD
	fn func()
	// state is 0 (idle), 1 (armed) or 2 (fired); whoever moves it from 1 owns the outcome.
	state atomic.Int32
	done  chan struct{}
	// fallback is used when no timerfd could be had.
	fallback *time.Timer
}

func newHandoff(fn func()) *handoff {
	h := &handoff{t: newTimerFD(), fn: fn, done: make(chan struct{})}
	if h.t == nil {
		close(h.done)
		return h
	}
	go func() {
		defer close(h.done)
		for {
			h.t.errno = 0
			if h.t.raw.Read(h.t.readFn) != nil || h.t.errno != 0 {
				return // closed
			}
			if h.state.CompareAndSwap(1, 2) {
				h.fn()
			}
		}
	}()
	return h
}

// arm runs fn after d unless disarm comes first.
func (h *handoff) arm(d time.Duration) {
	if h.t == nil {
		h.fallback = time.AfterFunc(d, h.fn)
		return
	}
	h.state.Store(1)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, 1)))}
	if unix.TimerfdSettime(h.t.fd, 0, &spec, nil) != nil && h.state.CompareAndSwap(1, 2) {
		h.fn() // cannot wait: hand the schedule on now
	}
}

// disarm cancels the timer; false if fn has run or is running.
func (h *handoff) disarm() bool {
	if h.t == nil {
		return h.fallback.Stop()
	}
	if !h.state.CompareAndSwap(1, 0) {
		return false
	}
	// Disarming also clears an expiration not yet read, so a late wake finds nothing.
	unix.TimerfdSettime(h.t.fd, 0, &unix.ItimerSpec{}, nil)
	return true
}

// close stops the goroutine; the timer must not be armed.
func (h *handoff) close() {
	if h.t != nil {
		h.t.file.Close()
	}
	<-h.done
}
