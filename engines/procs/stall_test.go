package procs

import (
	"errors"
	"testing"
	"time"
)

type fakePausable struct {
	paused  bool
	fail    bool
	resumed chan struct{}
}

func (f *fakePausable) Pause() error {
	if f.fail {
		return errors.New("not running")
	}
	f.paused = true
	return nil
}

func (f *fakePausable) Resume() error {
	f.paused = false
	select {
	case f.resumed <- struct{}{}:
	default:
	}
	return nil
}

// A stall stops every server and continues them when it ends, by its timer or early; a server
// that cannot be stopped ends the stall at once, continuing those already stopped.
func TestStall(t *testing.T) {
	a, b := &fakePausable{resumed: make(chan struct{}, 1)}, &fakePausable{resumed: make(chan struct{}, 1)}
	var s Stall
	if err := s.Start([]Pausable{a, b}, time.Hour); err != nil || !a.paused || !b.paused {
		t.Fatalf("start: %v, paused %v %v", err, a.paused, b.paused)
	}
	s.End()
	if a.paused || b.paused {
		t.Fatal("End left a server stopped")
	}
	if err := s.Start([]Pausable{a}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.resumed:
	case <-time.After(10 * time.Second):
		t.Fatal("the stall's timer never continued the server")
	}
	bad := &fakePausable{fail: true}
	if err := s.Start([]Pausable{b, bad}, time.Hour); err == nil || b.paused {
		t.Fatalf("a server that cannot stop: err %v, the other left paused %v", err, b.paused)
	}
}
