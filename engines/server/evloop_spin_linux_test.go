package server

import (
	"testing"
	"time"
)

// TestLoopSpin: with a spin cap, two clients sending back to back make the event loop poll
// before it blocks, and the polls find the next requests; one client alone (one request in
// flight) never makes it poll; requests 20 ms apart from either client (light load, an idle
// server between them) make it block at once; with the spin off it never polls. The replies are the same either way.
func TestLoopSpin(t *testing.T) {
	s := startServer(t, Config{LoopSpin: time.Millisecond})
	if s.loop == nil {
		t.Skip("no event loop")
	}
	a, b := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	for range 200 {
		writeAll(t, a, cmd("PING"))
		if got := readN(t, a, 1); got != "+PONG\r\n" {
			t.Fatalf("PING: %q", got)
		}
	}
	if n := s.loop.spins.Load(); n > 1 { // its first turn follows none of its own
		t.Errorf("one client alone: %d polls; want at most 1", n)
	}
	for range 300 {
		writeAll(t, a, cmd("PING"))
		writeAll(t, b, cmd("ECHO", "b"))
		if got := readN(t, a, 1) + readN(t, b, 1); got != "+PONG\r\n$1\r\nb\r\n" {
			t.Fatalf("PING, ECHO: %q", got)
		}
	}
	if spins, hits := s.loop.spins.Load(), s.loop.spinHits.Load(); spins == 0 || hits == 0 {
		t.Errorf("two clients back to back: %d polls, %d found work; want both > 0", spins, hits)
	}
	time.Sleep(20 * time.Millisecond) // the first wait after the burst may poll once, then blocks
	before := s.loop.spins.Load()
	for i := range 6 { // the clients take turns, so only the long waits keep the loop from polling
		c := []*rawConn{a, b}[i%2]
		writeAll(t, c, cmd("PING"))
		readN(t, c, 1)
		time.Sleep(20 * time.Millisecond)
	}
	if d := s.loop.spins.Load() - before; d != 0 {
		t.Errorf("light load: the loop polled %d times before blocking; want 0", d)
	}

	off := startServer(t, Config{LoopSpin: -1})
	c, d := dialRaw(t, off.Addr()), dialRaw(t, off.Addr())
	for range 100 {
		writeAll(t, c, cmd("PING"))
		writeAll(t, d, cmd("PING"))
		readN(t, c, 1)
		readN(t, d, 1)
	}
	if n := off.loop.spins.Load(); n != 0 {
		t.Errorf("spin off: %d polls", n)
	}
}

// TestSpinGate: the loop polls only after a short blocking wait and a turn of several clients,
// or of one other than the turn before.
func TestSpinGate(t *testing.T) {
	a, b := &client{lc: &loopConn{fd: 7}}, &client{lc: &loopConn{fd: 8}}
	var g spinGate
	steps := []struct {
		short bool      // the blocking wait ended within the cap
		ready []*client // the turn after it
		want  bool
	}{
		{false, []*client{a, b}, false},
		{true, []*client{a, b}, true},
		{true, nil, false},
		{true, []*client{a}, true}, // another client than the last single one (none yet)
		{true, []*client{a}, false},
		{true, []*client{a}, false},
		{true, []*client{b}, true},
		{true, []*client{a}, true},
		{false, []*client{b}, false},
	}
	for i, st := range steps {
		g.blocked(st.short)
		g.turn(st.ready)
		if got := g.want(); got != st.want {
			t.Errorf("step %d (short wait %v, %d clients): poll %v, want %v", i, st.short, len(st.ready), got, st.want)
		}
	}
}
