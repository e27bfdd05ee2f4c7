package redisq

import (
	"context"
	"time"

	"qbench/engines"
	"qbench/engines/server"
)

func init() {
	engines.Register(WithSection(engines.Registration{
		Name:      "embedded",
		RunsAlone: true,
		Designs:   designs,
		Summary:   "the in-repo Redis-protocol server, inside the qbench process on a free loopback port (the default; nothing to install)",
		New:       newEmbeddedEngine,
		Faults:    []string{"stall", "command"},
		// The in-process server runs without persistence (the server target has it).
		Sections:    designSections,
		Conformance: conformance,
	}))
}

func newEmbeddedEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	// Inside qbench's own process the server serves each connection on a goroutine, through Go's
	// network poller: the event loop (the default for the server as a process of its own) waits
	// in epoll_wait on a thread of its own and must win a P back from the generator's goroutines
	// after every wake-up; sharing the scheduler, it doubled produce p99 at 2,000 msg/s.
	s := server.New(server.Config{GoroutinePerConn: true})
	if err := s.Start(); err != nil {
		return nil, err
	}
	e, err := newEngine(ctx, spec, "embedded", s.Addr(), "")
	if err != nil {
		s.Close()
		return nil, err
	}
	e.closeTarget = s.Close
	e.version = server.Version()
	return &embeddedEngine{engine: e, server: s}, nil
}

// embeddedEngine is the in-repo server in qbench's own process: it can stall, never crash.
type embeddedEngine struct {
	*engine
	server *server.Server
}

// Stall makes the in-process server stop answering for d (engines.Staller).
func (e *embeddedEngine) Stall(_ context.Context, d time.Duration) error {
	e.server.Stall(d)
	return nil
}

// InProcess says the embedded server runs inside qbench's process (engines.InProcess), so the
// generator's CPU figures include the server's work.
func (e *embeddedEngine) InProcess() bool { return true }
