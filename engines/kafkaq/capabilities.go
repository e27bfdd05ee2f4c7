package kafkaq

import "qbench/engines"

// The capabilities each engine type of this package claims (engines/capabilities.go): a method
// renamed or changed here fails the build instead of silently switching the capability off.
var (
	_ engines.DeliverySharder = (*engine)(nil)
	_ engines.SoleReader      = (*engine)(nil)
	_ engines.LagReporter     = (*engine)(nil)
	_ engines.Sweeper         = (*engine)(nil)
	_ engines.FactReporter    = (*engine)(nil)
	_ engines.HealthReporter  = (*engine)(nil)
	_ engines.Clock           = (*engine)(nil)
	_ engines.LeaderMover     = (*engine)(nil)
	_ engines.DeliverySharder = (*managed)(nil)
	_ engines.SoleReader      = (*managed)(nil)
	_ engines.LagReporter     = (*managed)(nil)
	_ engines.Sweeper         = (*managed)(nil)
	_ engines.FactReporter    = (*managed)(nil)
	_ engines.HealthReporter  = (*managed)(nil)
	_ engines.Clock           = (*managed)(nil)
	_ engines.Crasher         = (*managed)(nil)
	_ engines.LeaderKiller    = (*managed)(nil)
	_ engines.ReplicaHolder   = (*managed)(nil)
)
