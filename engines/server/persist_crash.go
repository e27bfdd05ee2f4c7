package server

// Simulated crashes and recovery: Crash, PowerLoss, Restart.

import (
	"errors"
	"math/rand/v2"

	"qbench/engines/server/fsys"
)

// Crash simulates a process crash of this server: the log drops what it had not yet written
// (write or fsync calls already under way complete, as they would in the kernel), then the
// listener and every connection close without another byte sent. Replies not yet sent are never
// sent. Whatever reached the file system survives; with a simulated file system, call
// (*fsys.Sim).PowerLoss afterwards to also lose what was not fsynced. Start a new server on the
// same Dir and FS to recover.
func (s *Server) Crash() {
	s.mu.Lock()
	s.p.killed = true
	w := s.p.w
	s.mu.Unlock()
	if w != nil {
		w.Kill()
	}
	s.Close()
	s.p.bg.Wait()
}

// Restart starts a new server with s's configuration on s's address, Dir and FS: after Crash
// (and a simulated power loss) it is the recovery. s must be closed or crashed.
func (s *Server) Restart() (*Server, error) {
	cfg := s.cfg
	if s.addr != "" {
		cfg.Addr = s.addr
	}
	n := New(cfg)
	if err := n.Start(); err != nil {
		return nil, err
	}
	return n, nil
}

// PowerLoss simulates a power cut of a server running on a simulated file system: Crash, then
// every file keeps only what was fsynced (torn: plus a random part of its unsynced tail), then
// Restart on the same address. It fails if the server's FS is not an *fsys.Sim.
func (s *Server) PowerLoss(torn bool, rng *rand.Rand) (*Server, error) {
	sim, ok := s.cfg.FS.(*fsys.Sim)
	if !ok {
		return nil, errors.New("power loss needs the simulated file system (Config.FS = fsys.NewSim())")
	}
	s.Crash()
	sim.PowerLoss(torn, rng)
	return s.Restart()
}

// Done is closed when the server closes (Close, SHUTDOWN, Crash): `qbench serve` exits on it.
func (s *Server) Done() <-chan struct{} { return s.closing }

// fatal is Redis's exit(1) after an AOF error under appendfsync always: the server stops as a
// crash would (nothing buffered is written, every connection drops without a reply) and Err
// reports why, so `qbench serve` exits 1. A supervisor restarts it and the log is replayed.
func (s *Server) fatal(err error) {
	s.fatalMu.Lock()
	if s.fatalErr == nil {
		s.fatalErr = err
	}
	s.fatalMu.Unlock()
	go s.Crash()
}

// Err is the error that stopped the server (see fatal), or nil.
func (s *Server) Err() error {
	s.fatalMu.Lock()
	defer s.fatalMu.Unlock()
	return s.fatalErr
}
