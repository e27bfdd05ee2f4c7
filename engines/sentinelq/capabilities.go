package sentinelq

import "qbench/engines"

// The capabilities the engine claims (engines/capabilities.go): a method renamed or changed here
// fails the build instead of silently switching the capability off. All but Partitioner come
// from redisq's single-server engine (redisq.Hosted).
var (
	_ engines.Sharder          = (*engine)(nil)
	_ engines.SoleReader       = (*engine)(nil)
	_ engines.LagReporter      = (*engine)(nil)
	_ engines.Sweeper          = (*engine)(nil)
	_ engines.DeadLetterReader = (*engine)(nil)
	_ engines.PendingReporter  = (*engine)(nil)
	_ engines.FactReporter     = (*engine)(nil)
	_ engines.HealthReporter   = (*engine)(nil)
	_ engines.Commander        = (*engine)(nil)
	_ engines.Grouper          = (*engine)(nil)
	_ engines.Partitioner      = (*engine)(nil)
)
