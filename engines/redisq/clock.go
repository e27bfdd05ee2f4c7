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

// PrepareClock has nothing to prepare: TIME answers in seconds and microseconds.
func (e *engine) PrepareClock(context.Context) (engines.ClockInfo, error) {
	return engines.ClockInfo{Source: "redis TIME", Resolution: time.Microsecond}, nil
}
