package server

// loopConn: the event loop's own socket (evloop_linux.go).

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errAgain is a non-blocking read or write that would block.
var errAgain = errors.New("resource temporarily unavailable")

// loopConn is a socket the event loop owns: non-blocking reads and writes on a descriptor of
// its own. Close only shuts the socket down; the loop sees the end of stream and frees the
// client, and only the loop closes the descriptor.
type loopConn struct {
	mu           sync.Mutex
	fd           int  // -1 once closed or handed to a net.Conn
	shut         bool // Close was called
	laddr, raddr net.Addr
}

// newLoopConn duplicates tc's descriptor (the caller then closes tc, which removes it from
// Go's poller; the duplicate keeps the socket open).
func newLoopConn(tc *net.TCPConn) (*loopConn, error) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &loopConn{fd: fd, laddr: tc.LocalAddr(), raddr: tc.RemoteAddr()}, nil
}

func (lc *loopConn) Read(b []byte) (int, error) {
	for {
		n, err := lc.read(b)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, errAgain
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes what the socket takes now; errAgain with n < len(b) when it is full.
func (lc *loopConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := lc.write(b[done:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return done, errAgain
		case err != nil:
			return done, err
		}
		done += n
	}
	return done, nil
}

// Writev writes bufs in order as far as the socket takes them (writev(2), 1,024 buffers a
// call); errAgain with fewer bytes than all when it is full. It may change bufs.
func (lc *loopConn) Writev(bufs [][]byte) (int, error) {
	if len(bufs) == 1 {
		return lc.Write(bufs[0])
	}
	done := 0
	for len(bufs) > 0 {
		n, err := unix.Writev(lc.fd, bufs[:min(len(bufs), 1024)])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return done, errAgain
		case err != nil:
			return done, err
		}
		done += n
		for len(bufs) > 0 && n >= len(bufs[0]) {
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		if n > 0 {
			bufs[0] = bufs[0][n:]
		}
	}
	return done, nil
}

// read and write are read(2) and write(2) on the non-blocking socket. They never block, so
// they skip the scheduler's system-call bookkeeping (entersyscall/exitsyscall and their atomics:
// 4-6% of the loop's CPU unpipelined), as the runtime does for its own non-blocking calls.
// Under the race detector they stay syscall.Read/Write: those tell it that bytes written to a
// socket happen before their reading (ioSync), which orders what a client did before sending
// a command with the command's execution.
func (lc *loopConn) read(b []byte) (int, error) {
	if raceEnabled {
		return syscall.Read(lc.fd, b)
	}
	return rawRW(syscall.SYS_READ, lc.fd, b)
}

func (lc *loopConn) write(b []byte) (int, error) {
	if raceEnabled {
		return syscall.Write(lc.fd, b)
	}
	return rawRW(syscall.SYS_WRITE, lc.fd, b)
}

func rawRW(trap uintptr, fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

func (lc *loopConn) Close() error {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.fd >= 0 && !lc.shut {
		lc.shut = true
		syscall.Shutdown(lc.fd, syscall.SHUT_RDWR)
	}
	return nil
}

func (lc *loopConn) closeFD() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.fd >= 0 {
		syscall.Close(lc.fd)
		lc.fd = -1
	}
}

// toNetConn gives the socket to a net.Conn (Go's poller) and closes the loop's descriptor.
func (lc *loopConn) toNetConn() (net.Conn, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	f := os.NewFile(uintptr(lc.fd), "")
	lc.fd = -1
	defer f.Close()
	return net.FileConn(f)
}

func (lc *loopConn) LocalAddr() net.Addr                { return lc.laddr }
func (lc *loopConn) RemoteAddr() net.Addr               { return lc.raddr }
func (lc *loopConn) SetDeadline(t time.Time) error      { return nil }
func (lc *loopConn) SetReadDeadline(t time.Time) error  { return nil }
func (lc *loopConn) SetWriteDeadline(t time.Time) error { return nil }
