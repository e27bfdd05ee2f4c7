package server

import (
	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
)

// newWriter opens the log writer with the server's log and its fatal-error exit.
func (p *persistence) newWriter(f fsys.File, size int64) *aof.Writer {
	w := aof.NewWriter(p.fs, f, size, p.policy, p.interval)
	w.Logf = p.s.logf
	w.OnFatal = p.s.fatal
	return w
}

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
