package redisq

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// Designs the Redis engines support; the first is the default.
var designs = []string{"stream", "list", "reliable-list", "pubsub"}

func init() {
	engines.Register(engines.Registration{
		Name:    "redis-url",
		Designs: designs,
		Summary: "an existing Redis at address (host:port or redis://[:password@]host:port); keys under a run-specific prefix",
		New:     newURLEngine,
		Faults:  []string{"stall", "command"},
		Shared:  true,
	})
}

// newURLEngine connects to an existing Redis: host:port, or a redis:// or rediss:// (TLS) URL
// with an optional password, as go-redis parses it. The password is never logged or written to
// results.
func newURLEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	opts, err := parseAddress(spec.Address)
	if err != nil {
		return nil, err
	}
	return newEngineWith(ctx, spec, "redis-url", opts)
}

func parseAddress(s string) (*redis.Options, error) {
	if !strings.Contains(s, "://") {
		return &redis.Options{Addr: s}, nil
	}
	opts, err := redis.ParseURL(s)
	if err != nil {
		// The error must not echo the password back.
		if u, perr := url.Parse(s); perr == nil {
			s = u.Redacted()
		}
		return nil, fmt.Errorf("address %s: %v", s, strings.ReplaceAll(err.Error(), s, "<address>"))
	}
	return opts, nil
}
