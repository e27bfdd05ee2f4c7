package redisq

import (
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Probes of what a Redis someone else runs allows, for the checks a fault makes before the run
// (here, and for redis-cluster-url in engines/rediscluster).

// Allowed reports whether a probe's outcome says a command may be sent: it ran, or the server
// refused it for its arguments or its state ("No failover in progress", a syntax error), which
// it checks after the user's permission and the command's existence. A refusal for the user
// (NOPERM), a command that is not there (renamed away, an older Redis), one not allowed here
// (DEBUG not enabled, FAILOVER in cluster mode), or no reply at all is a no.
func Allowed(err error) bool {
	if err == nil {
		return true
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	m := re.Error()
	return !strings.HasPrefix(m, "NOPERM") && !strings.Contains(m, "unknown command") &&
		!strings.Contains(m, "unknown subcommand") && !strings.Contains(m, "not allowed")
}

// VersionAtLeast reports whether a Redis version string ("7.0.15") is major.minor or later.
func VersionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}
