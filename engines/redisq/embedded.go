package redisq

import (
	"context"
	"time"

	"qbench/engines"
	"qbench/engines/server"
)

func init() {
	engines.Register(engines.Registration{
		Name:    "embedded",
		Designs: designs,
		Summary: "the in-repo Redis-protocol server, inside the qbench process on a free loopback port (the default; nothing to install)",
		New:     newEmbeddedEngine,
		Faults:  []string{"stall", "command"},
		// The in-process server runs without persistence (the server target has it).
		Sections: designSections,
	})
}

func newEmbeddedEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	s := server.New(server.Config{})
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
