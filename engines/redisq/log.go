package redisq

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// go-redis logs dial failures and the like to stderr; during a server-crash fault that is a
// flood. Every failure that matters reaches the runner as an error and is counted in the result.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietLogger{}) }
