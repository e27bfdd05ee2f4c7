package server

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestLoopConnIO: the loop's sockets read and write with raw system calls; what the loop
// relies on must hold: nothing to read is errAgain (not EOF, not a block), data comes back
// whole, a full socket is a short write with errAgain, a hang-up is an error other than
// errAgain (a reset here: the peer closed with our bytes unread).
func TestLoopConnIO(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	lc, err := newLoopConn(nc.(*net.TCPConn))
	nc.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer lc.closeFD()
	buf := make([]byte, 64)
	readWithin := func(want string) error { // the peer's bytes arrive asynchronously
		deadline := time.Now().Add(2 * time.Second)
		got := ""
		for len(got) < len(want) && time.Now().Before(deadline) {
			n, err := lc.Read(buf)
			if errors.Is(err, errAgain) {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return err
			}
			got += string(buf[:n])
		}
		if got != want {
			return errors.New("read " + got + ", want " + want)
		}
		return nil
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"nothing to read is errAgain", func() error {
			if n, err := lc.Read(buf); n != 0 || err != errAgain {
				return errors.New("got data or another error on an empty socket")
			}
			return nil
		}},
		{"the peer's bytes come back whole", func() error {
			if _, err := peer.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
				return err
			}
			return readWithin("*1\r\n$4\r\nPING\r\n")
		}},
		{"a write reaches the peer", func() error {
			if n, err := lc.Write([]byte("+PONG\r\n")); n != 7 || err != nil {
				return errors.New("short or failed write")
			}
			got := make([]byte, 7)
			peer.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := io.ReadFull(peer, got); err != nil || string(got) != "+PONG\r\n" {
				return errors.New("peer read " + string(got))
			}
			return nil
		}},
		{"a full socket is a short write with errAgain", func() error {
			big := make([]byte, 64<<20) // more than both socket buffers hold
			n, err := lc.Write(big)
			if err != errAgain || n <= 0 || n >= len(big) {
				return errors.New("want a partial write and errAgain")
			}
			return nil
		}},
		{"a hang-up ends the stream", func() error {
			peer.Close()
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				_, err := lc.Read(buf)
				switch {
				case err == io.EOF || errors.Is(err, syscall.ECONNRESET):
					return nil
				case err != nil && err != errAgain:
					return err
				}
				time.Sleep(time.Millisecond)
			}
			return errors.New("still errAgain after the peer closed")
		}},
	}
	for _, st := range steps { // in order: each step starts from the socket the last one left
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
}
