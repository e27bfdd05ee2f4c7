//go:build unix

package redisq

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// A socket deadline stands for a later one only when it has not passed, is no later than asked
// and at most a second (and a tenth of the time left) earlier; an earlier deadline, or none, is
// always set.
func TestKeepDeadline(t *testing.T) {
	const s = int64(time.Second)
	now := 1000 * s
	for _, c := range []struct {
		name       string
		have, want int64
		keep       bool
	}{
		{"none for none", 0, 0, true},
		{"none asked: clear", now + 10*s, 0, false},
		{"first deadline", 0, now + 10*s, false},
		{"same", now + 10*s, now + 10*s, true},
		{"later by 0.5 s of 10 s", now + 10*s, now + 10*s + s/2, true},
		{"later by 1.5 s", now + 10*s, now + 11*s + s/2, false},
		{"earlier asked", now + 10*s, now + 9*s, false},
		{"have passed", now - 1, now + s/100, false},
		{"short timeout: 60 ms late of 500 ms", now + 440*s/1000, now + 500*s/1000, false},
		{"short timeout: 40 ms late of 500 ms", now + 460*s/1000, now + 500*s/1000, true},
	} {
		if got := keepDeadline(c.have, c.want, now); got != c.keep {
			t.Errorf("%s: keepDeadline = %v, want %v", c.name, got, c.keep)
		}
	}
}

// A spin is bounded by the longest spin, spinRTTs round trips and 1/spinShare of the idle
// time before the request; no bound set, no spin.
func TestSpinBudget(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		name       string
		max, rtt   time.Duration
		idle, want time.Duration
	}{
		{"off", 0, 30 * us, time.Second, 0},
		{"by the longest spin", 100 * us, 50 * us, time.Second, 100 * us},
		{"by the round trip", 100 * us, 20 * us, time.Second, 60 * us},
		{"by the idle time (a closed loop)", 100 * us, 50 * us, 80 * us, 10 * us},
		{"back to back", 100 * us, 50 * us, 0, 0},
	} {
		s := &spinner{max: c.max}
		s.rttNs.Store(int64(c.rtt))
		if got := s.budget(c.idle); got != c.want {
			t.Errorf("%s: budget = %s, want %s", c.name, got, c.want)
		}
	}
	var nilSpinner *spinner
	if nilSpinner.budget(time.Second) != 0 {
		t.Error("a nil spinner spins")
	}
}

func TestSpinEnv(t *testing.T) {
	for _, c := range []struct {
		v   string
		max time.Duration
		bad bool
	}{
		{"", 0, false}, {"0", 0, false}, {"50us", 50 * time.Microsecond, false},
		{"2ms", 0, true}, {"-1us", 0, true}, {"fast", 0, true},
	} {
		t.Setenv(spinEnv, c.v)
		s, err := newSpinner()
		if (err != nil) != c.bad || err == nil && s.max != c.max {
			t.Errorf("%s=%q: spinner %+v, error %v", spinEnv, c.v, s, err)
		}
	}
}

// A quietConn reads and writes with raw system calls and still behaves as a net.Conn: data
// both ways (also larger than the socket buffers), a read deadline's timeout error, io.EOF when
// the peer closes; with busy polling on, a prompt reply is found by the spin.
func TestQuietConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(peer)
			return
		}
		peer <- c
	}()
	s := &spinner{max: time.Millisecond}
	s.rttNs.Store(int64(initialRTT))
	c, err := quietDialer(s, (&net.Dialer{}).DialContext)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*quietConn); !ok {
		t.Fatalf("dialed a %T, not a quietConn", c)
	}
	p := <-peer
	if p == nil {
		t.Fatal("no connection accepted")
	}
	defer p.Close()
	go io.Copy(p, p) // echo

	// Echo rounds: small (the spin should find most), then 4 MiB (writes wait for room).
	buf := make([]byte, 64)
	for i := range 20 {
		time.Sleep(8 * time.Millisecond) // idle before the request, as at the floor: spin up to 1 ms
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatalf("round %d: write: %v", i, err)
		}
		if n, err := io.ReadFull(c, buf[:4]); err != nil || string(buf[:n]) != "ping" {
			t.Fatalf("round %d: read %q, %v", i, buf[:n], err)
		}
	}
	if s.hits.Load() == 0 {
		t.Errorf("busy polling found no reply in 20 rounds (misses %d)", s.misses.Load())
	}
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = byte(i)
	}
	errc := make(chan error, 1)
	go func() { _, err := c.Write(big); errc <- err }()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading 4 MiB back: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("writing 4 MiB: %v", err)
	}
	for i := range got {
		if got[i] != big[i] {
			t.Fatalf("byte %d: %d, want %d", i, got[i], big[i])
		}
	}

	// A read deadline times out as a net.Conn's does.
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err = c.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past its deadline: %v, want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})

	// The peer closes: io.EOF.
	p.Close()
	if _, err := c.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
}
