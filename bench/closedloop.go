package bench

import (
	"fmt"

	"qbench/engines"
	"qbench/scenarios"
)

// inFlightBound says when a closed loop's rate was set by qbench's own in-flight limit
// (results.Generator.InFlightBound): its window (producers x in_flight batches of batch
// messages, every one of them in flight all the time in a closed loop) is narrower than the
// shape a closed loop on this engine gets by default (its registration's ClosedLoop, else the
// scenario defaults), which is the window known to let the engine, not qbench, set the rate.
// Empty for a paced run, a run that does not produce, and a window at least that wide.
func inFlightBound(sc *scenarios.Scenario) string {
	if !sc.Rate.Max || !sc.Produces() {
		return ""
	}
	shape := engines.Shape{Batch: scenarios.DefaultBatch, InFlight: scenarios.DefaultInFlight}
	if reg, err := engines.Lookup(sc.Engine); err == nil {
		shape.Batch = max(shape.Batch, reg.ClosedLoop.Batch)
		shape.InFlight = max(shape.InFlight, reg.ClosedLoop.InFlight)
	}
	window := int64(sc.Producers) * int64(sc.InFlight) * int64(sc.Batch)
	if want := int64(shape.Batch) * int64(shape.InFlight); window >= want {
		return ""
	}
	return fmt.Sprintf("rate set by qbench's in-flight limit (%d batches of %d per producer, x %d producers: %d messages in flight, under the %d of %s's closed-loop shape, %d batches of %d)",
		sc.InFlight, sc.Batch, sc.Producers, window, shape.Batch*shape.InFlight, sc.Engine, shape.InFlight, shape.Batch)
}
