//go:build unix

package redisq

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// quietDialer wraps dial so that TCP connections are quietConns.
func quietDialer(s *spinner, dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return c, err
		}
		tc, ok := c.(*net.TCPConn)
		if !ok {
			return c, nil
		}
		rc, err := tc.SyscallConn()
		if err != nil {
			return c, nil
		}
		q := &quietConn{TCPConn: tc, rc: rc, s: s}
		q.readFn, q.writeFn = q.rawRead, q.rawWrite
		return q, nil
	}
}

// quietMax is the largest write made raw: a large pipeline's write carries TCP's delivery of it
// and may take long enough for the runtime to want the P back (sysmon hands a P in a system
// call to another thread, which a raw call prevents). At 200,000 msg/s (batches of 32 KiB) send
// delay p99 was worse in 7 of 8 runs alternated with the previous code while writes of every
// size were raw (and the pacer spun without yielding; see bench/sleep_linux.go).
const quietMax = 4 << 10

// quietConn is a TCP connection that wakes no other thread of qbench's process on its own
// account. At the latency floor (one message a millisecond) both Ps are idle between messages,
// so the runtime's monitor thread (sysmon) goes to sleep; every system call made through
// syscall.Syscall wakes it again (entersyscall: a futex wake, then its 20 us nanosleep loop,
// on the vCPU the server needs). A socket's reads and writes never block (the socket is
// non-blocking; Go's poller does the waiting), so quietConn makes them with RawSyscall, which
// skips that hand-shake, and waits through the poller as net.Conn does (deadlines included);
// writes larger than quietMax go through net.Conn. It
// also moves its deadlines only when it must (setDeadline), and can busy-poll for a reply
// (spinner, off by default).
type quietConn struct {
	*net.TCPConn
	rc syscall.RawConn
	s  *spinner
	// rd and wd are the read and write deadlines set on the socket (UnixNano; 0: none).
	rd, wd atomic.Int64
	// wroteNs is when the last request was written (UnixNano; 0: no reply awaited); idleNs how
	// long the connection had been idle before it; repliedNs when the last reply arrived.
	// Atomics: a pub/sub connection is read by one goroutine and written by another.
	wroteNs, idleNs, repliedNs atomic.Int64
	// The raw read's and write's buffer and outcome, and the callbacks made once (a closure per
	// call would be an allocation per call). One reader and one writer at a time, as net.Conn.
	rbuf, wbuf      []byte
	rn, wn          int
	rerr, werr      syscall.Errno
	readFn, writeFn func(fd uintptr) bool
}

// rawRead reads once without blocking: done unless the socket has nothing (EAGAIN).
func (c *quietConn) rawRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(c.rbuf))), uintptr(len(c.rbuf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerr = int(n), e
		return true
	}
}

// rawWrite writes all of wbuf without blocking, waiting for room when the socket has none.
func (c *quietConn) rawWrite(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		rest := c.wbuf[c.wn:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		switch e {
		case 0:
			c.wn += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werr = e
			return true
		}
	}
	return true
}

func (c *quietConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

func (c *quietConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	now := time.Now().UnixNano()
	if c.wroteNs.Load() == 0 {
		idle := now - c.repliedNs.Load()
		if c.repliedNs.Load() == 0 {
			idle = int64(time.Second) // a fresh connection: long idle
		}
		c.idleNs.Store(idle)
		c.wroteNs.Store(now)
	}
	if len(p) > quietMax {
		return c.TCPConn.Write(p)
	}
	c.wbuf, c.wn, c.werr = p, 0, 0
	err := c.rc.Write(c.writeFn)
	n, errno := c.wn, c.werr
	c.wbuf = nil
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

func (c *quietConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	wrote := c.wroteNs.Swap(0)
	if wrote != 0 {
		if b := c.s.budget(time.Duration(c.idleNs.Load())); b > 0 && spinning.CompareAndSwap(0, 1) {
			n, ok := c.spin(p, wrote+int64(b))
			spinning.Store(0)
			if ok {
				c.replied(wrote)
				c.s.hits.Add(1)
				return n, nil
			}
			c.s.misses.Add(1)
		}
	}
	c.rbuf, c.rn, c.rerr = p, 0, 0
	err := c.rc.Read(c.readFn)
	n, errno := c.rn, c.rerr
	c.rbuf = nil
	if wrote != 0 {
		c.replied(wrote)
	}
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// replied notes a reply to the request written at wrote.
func (c *quietConn) replied(wrote int64) {
	now := time.Now().UnixNano()
	c.repliedNs.Store(now)
	c.s.noteRTT(time.Duration(now - wrote))
}

// spin reads without blocking until data arrives (ok) or the deadline (UnixNano) passes, or the
// socket reports anything but EAGAIN (then the caller's read returns it). It yields between
// reads, so a goroutine runnable on this P is not held up by the spin.
func (c *quietConn) spin(p []byte, deadline int64) (n int, ok bool) {
	start := time.Now().UnixNano()
	defer func() { c.s.spunNs.Add(time.Now().UnixNano() - start) }()
	for {
		var errno syscall.Errno
		var got bool
		c.rbuf = p
		if rerr := c.rc.Read(func(fd uintptr) bool {
			got = c.rawRead(fd)
			n, errno = c.rn, c.rerr
			return true
		}); rerr != nil {
			return 0, false
		}
		c.rbuf = nil
		if got {
			return n, errno == 0 && n > 0
		}
		if time.Now().UnixNano() >= deadline {
			return 0, false
		}
		runtime.Gosched()
	}
}

// go-redis sets both deadlines to now + its timeout before every command, and each move of a
// socket deadline re-arms a runtime timer. A deadline already set, not yet passed, no later
// than asked and earlier by at most deadlineSlack and by at most 1/deadlineShare of the time
// left is kept: a 10 s timeout fires after 9 to 10 s, and the socket's timer moves about once
// a second instead of twice a command.
const (
	deadlineSlack = time.Second
	deadlineShare = 10
)

func (c *quietConn) SetReadDeadline(t time.Time) error {
	return setDeadline(&c.rd, t, c.TCPConn.SetReadDeadline)
}

func (c *quietConn) SetWriteDeadline(t time.Time) error {
	return setDeadline(&c.wd, t, c.TCPConn.SetWriteDeadline)
}

func (c *quietConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// setDeadline sets the deadline t through set unless the one in effect (cur) may stand for it
// (keepDeadline). An earlier deadline, or none, is always set.
func setDeadline(cur *atomic.Int64, t time.Time, set func(time.Time) error) error {
	var want int64
	if !t.IsZero() {
		want = t.UnixNano()
	}
	if keepDeadline(cur.Load(), want, time.Now().UnixNano()) {
		return nil
	}
	if err := set(t); err != nil {
		return err
	}
	cur.Store(want)
	return nil
}

// keepDeadline says whether a socket deadline have (UnixNano, 0: none) may stand for want at
// now.
func keepDeadline(have, want, now int64) bool {
	if have == 0 || want == 0 {
		return have == want
	}
	return have > now && have <= want && want-have <= min(int64(deadlineSlack), (want-now)/deadlineShare)
}
