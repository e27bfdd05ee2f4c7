package main

import (
	"os"
	"runtime/debug"

	"qbench/scenarios"
)

// runGCPercent is the GOGC qbench run sets for itself when $GOGC is not set. The generator's
// live heap is small (histograms, buffers, the ledger) and what it allocates per message is
// short-lived, so Go's default (a cycle each time the heap doubles) ran a GC cycle every second
// or so at 10,000 msg/s, each with two stop-the-world pauses; on a loaded 2-core machine a pause
// waits for every thread to stop and was seen at 2-57 ms (gctrace, sweep and mark termination):
// a stall in every producer's schedule. Four times the headroom is a quarter of the cycles, for
// a heap a few times a small live heap.
const runGCPercent = 400

// tuneGC sets runGCPercent and, so that the headroom cannot take the machine's memory on a run
// whose ledger is large, a soft memory limit of the memory budget's whole (the ledger may take
// scenarios.MemoryShare of it), unless $GOGC or $GOMEMLIMIT says otherwise. It is for qbench run
// only: a server child process (RunChildServerIfAsked) keeps Go's defaults.
func tuneGC() {
	var flagBudget int64
	if memoryBudget != "" {
		flagBudget, _ = scenarios.ParseBytes(memoryBudget) // loadScenario has refused a bad one
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(runGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if b, err := scenarios.ResolveMemoryBudget(flagBudget); err == nil && b.Bytes > 0 {
		debug.SetMemoryLimit(int64(float64(b.Bytes) / scenarios.MemoryShare))
	}
}
