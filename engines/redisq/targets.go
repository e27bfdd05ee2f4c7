package redisq

import (
	"context"
	"fmt"
	"net/url"

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
	})
}

// newURLEngine connects to an existing Redis. The password may come in a redis:// URL; it is never
// logged or written to results.
func newURLEngine(ctx context.Context, spec engines.Spec) (engines.Engine, error) {
	addr, password, err := parseAddress(spec.Address)
	if err != nil {
		return nil, err
	}
	return newEngine(ctx, spec, "redis-url", addr, password)
}

func parseAddress(s string) (addr, password string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return s, "", nil // plain host:port
	}
	if u.Scheme != "redis" {
		return "", "", fmt.Errorf("address %q: only redis:// URLs or host:port are supported", u.Redacted())
	}
	if u.User != nil {
		password, _ = u.User.Password()
	}
	return u.Host, password, nil
}
