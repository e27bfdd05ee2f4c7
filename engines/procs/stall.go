package procs

import (
	"errors"
	"sync"
	"syscall"
	"time"
)

// Signal sends sig to the child's process group; an error when it is not running.
func (p *Proc) Signal(sig syscall.Signal) error {
	if p == nil || p.Exited() {
		return errors.New("procs: process not running")
	}
	return syscall.Kill(-p.PID(), sig)
}

// Pausable is a server whose processes can be stopped (SIGSTOP) and continued (SIGCONT).
type Pausable interface {
	Pause() error
	Resume() error
}

// Stall stops servers for a while, as a frozen VM or a long pause would: the engines' stall
// fault for servers qbench started and cannot ask to sleep. Safe for concurrent use.
type Stall struct {
	mu     sync.Mutex
	paused []Pausable
	timer  *time.Timer
}

// Start stops every server and continues them after d; it returns once they are stopped. A
// stall already running ends first.
func (s *Stall) Start(servers []Pausable, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked()
	for _, p := range servers {
		s.paused = append(s.paused, p)
		if err := p.Pause(); err != nil {
			s.endLocked()
			return err
		}
	}
	s.timer = time.AfterFunc(d, s.End)
	return nil
}

// End continues whatever a stall stopped (at its end, or early, before the servers are
// stopped for good).
func (s *Stall) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked()
}

func (s *Stall) endLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	for _, p := range s.paused {
		_ = p.Resume()
	}
	s.paused = nil
}
