package natsq

import "qbench/engines"

// The capabilities each engine type of this package claims (engines/capabilities.go): a method
// renamed or changed here fails the build instead of silently switching the capability off.
var (
	_ engines.LagReporter     = (*engine)(nil)
	_ engines.Sweeper         = (*engine)(nil)
	_ engines.FactReporter    = (*engine)(nil)
	_ engines.Grouper         = (*engine)(nil)
	_ engines.PendingReporter = (*engine)(nil)
	_ engines.HealthReporter  = (*engine)(nil)
	_ engines.LagReporter     = (*managed)(nil)
	_ engines.Sweeper         = (*managed)(nil)
	_ engines.FactReporter    = (*managed)(nil)
	_ engines.Staller         = (*managed)(nil)
	_ engines.Crasher         = (*managed)(nil)
	_ engines.Grouper         = (*managed)(nil)
	_ engines.PendingReporter = (*managed)(nil)
	_ engines.HealthReporter  = (*managed)(nil)
	_ engines.DiskFiller      = (*managed)(nil)
	_ engines.LeaderKiller    = (*managed)(nil)
)
