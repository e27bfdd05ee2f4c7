package nullq

import "qbench/engines"

// The capabilities each engine type of this package claims (engines/capabilities.go): a method
// renamed or changed here fails the build instead of silently switching the capability off.
var (
	_ engines.LagReporter  = (*Engine)(nil)
	_ engines.Sweeper      = (*Engine)(nil)
	_ engines.FactReporter = (*Engine)(nil)
	_ engines.InProcess    = (*Engine)(nil)
	_ engines.Grouper      = (*Engine)(nil)
)
