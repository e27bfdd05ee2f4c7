package redisq

import (
	"context"
	"time"

	"qbench/engines"
)

// EngineTime is the server's clock (TIME: seconds and microseconds), for estimating a load
// generator's clock offset in a run from several machines (engines.Clock).
func (e *engine) EngineTime(ctx context.Context) (time.Time, error) {
	return e.client.Time(ctx).Result()
}

var _ engines.Clock = (*engine)(nil)
