package server

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ServeUntilSignal is a server process's life, shared by the "server" target's child process
// and cmd/qserver: start s, print its address on out (the parent reads it there), serve until
// SIGINT or SIGTERM or until the server stops itself (SHUTDOWN, or a fatal AOF error, after
// which Redis exits 1), then close. It returns Start's error or the error that stopped the
// server; nil after a signal or SHUTDOWN. Before closing it writes the diagnostics
// runtime_stats.go describes, if asked.
func ServeUntilSignal(s *Server, out io.Writer) error {
	stopTrace := startTrace(os.Getenv("QBENCH_SERVER_TRACE"), os.Stderr)
	defer stopTrace()
	if err := s.Start(); err != nil {
		return err
	}
	fmt.Fprintln(out, s.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case <-sigs:
	case <-s.Done():
	}
	writeExitDiagnostics(os.Stderr)
	s.Close()
	return s.Err()
}
