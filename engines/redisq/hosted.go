package redisq

import (
	"context"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// Hosted is this package's single-server engine on servers another engine package starts and
// owns, reached through a dialer that package gives (opts.Dialer): engines/sentinelq asks its
// Sentinels where the primary is each time a connection is made. It carries every capability
// of the single-server engine (lag, sweep, pending, facts, health, commands); the owning
// package adds its faults by embedding it.
type Hosted struct{ *engine }

// NewHosted connects to opts.Addr (through opts.Dialer, when set) for spec's design. Close
// closes the client, then calls stop (which stops what the caller started); pid names the
// server's process for Facts. On error nothing is stopped: the caller still owns its servers.
func NewHosted(ctx context.Context, spec engines.Spec, target string, opts *redis.Options, stop func() error, pid func() string) (*Hosted, error) {
	e, err := newEngineWith(ctx, spec, target, opts)
	if err != nil {
		return nil, err
	}
	e.closeTarget, e.pid = stop, pid
	return &Hosted{e}, nil
}
