package rediscluster

import "qbench/engines"

// The capabilities each engine type of this package claims (engines/capabilities.go): a method
// renamed or changed here fails the build instead of silently switching the capability off.
var (
	_ engines.DeliverySharder  = (*engine)(nil)
	_ engines.SoleReader       = (*engine)(nil)
	_ engines.LagReporter      = (*engine)(nil)
	_ engines.Sweeper          = (*engine)(nil)
	_ engines.FactReporter     = (*engine)(nil)
	_ engines.Crasher          = (*engine)(nil)
	_ engines.FailoverTarget   = (*engine)(nil)
	_ engines.FailoverReporter = (*engine)(nil)
	_ engines.Staller          = (*engine)(nil)
	_ engines.ReplicaHolder    = (*engine)(nil)
	_ engines.Grouper          = (*engine)(nil)
	_ engines.ShardTargeter    = (*engine)(nil)
	_ engines.Partitioner      = (*engine)(nil)
)
