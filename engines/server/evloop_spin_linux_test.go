package server

import (
	"testing"
	"time"
)

// TestLoopSpin: with a spin cap, back-to-back requests make the event loop poll before it
// blocks and the polls find the next request; requests 20 ms apart (light load, an idle server
// between them) make it block at once, with no poll at all; with the spin off it never polls.
// The replies are the same either way (TestConnModes covers the default setting).
func TestLoopSpin(t *testing.T) {
	s := startServer(t, Config{LoopSpin: time.Millisecond})
	if s.loop == nil {
		t.Skip("no event loop")
	}
	a := dialRaw(t, s.Addr())
	for range 300 {
		writeAll(t, a, cmd("PING"))
		if got := readN(t, a, 1); got != "+PONG\r\n" {
			t.Fatalf("PING: %q", got)
		}
	}
	if spins, hits := s.loop.spins.Load(), s.loop.spinHits.Load(); spins == 0 || hits == 0 {
		t.Errorf("back to back: %d polls, %d found work; want both > 0", spins, hits)
	}
	time.Sleep(20 * time.Millisecond) // the first wait after the burst polls once, then blocks
	before := s.loop.spins.Load()
	for range 5 {
		writeAll(t, a, cmd("PING"))
		readN(t, a, 1)
		time.Sleep(20 * time.Millisecond)
	}
	if d := s.loop.spins.Load() - before; d != 0 {
		t.Errorf("light load: the loop polled %d times before blocking; want 0", d)
	}

	off := startServer(t, Config{LoopSpin: -1})
	b := dialRaw(t, off.Addr())
	for range 100 {
		writeAll(t, b, cmd("PING"))
		readN(t, b, 1)
	}
	if n := off.loop.spins.Load(); n != 0 {
		t.Errorf("spin off: %d polls", n)
	}
}

// TestSpinGate: the poll is wanted only after a short blocking wait; a poll that finds nothing
// makes the next 1, 3, 7, ... 63 waits block at once; one that finds work ends the back-off.
func TestSpinGate(t *testing.T) {
	var g spinGate
	if g.want() {
		t.Fatal("a new loop polls before any wait")
	}
	g.blocked(false)
	if g.want() {
		t.Fatal("polls after a long wait")
	}
	g.blocked(true)
	if !g.want() || !g.want() {
		t.Fatal("does not poll after a short wait")
	}
	for miss, want := range []int{1, 3, 7, 15, 31, 63, 63} {
		g.polled(false)
		for i := range want {
			if g.want() {
				t.Fatalf("after %d misses, wait %d polls; want %d waits without", miss+1, i+1, want)
			}
		}
		if !g.want() {
			t.Fatalf("after %d misses and %d waits: no poll", miss+1, want)
		}
	}
	g.polled(true)
	g.polled(false)
	if g.want() || !g.want() {
		t.Fatal("a poll that found work does not end the back-off")
	}
}
