package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts what --memprofile and --trace ask for (either may be empty); stop writes
// the allocation profile and ends the trace. Both look for the generator's stalls: the trace
// shows GC stop-the-world pauses, a producer goroutine not scheduled and timer lateness; the
// allocation profile shows what makes the GC run (go tool pprof -sample_index=alloc_space).
func startProfiles(memPath, tracePath string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if memPath != "" {
		f, err := os.Create(memPath)
		if err != nil {
			return nil, usageError{fmt.Errorf("--memprofile %s: %w", memPath, err)}
		}
		// Every allocation sampled at the default rate (one per 512 KiB) is enough for
		// shares; the profile is cumulative from the process's start.
		stops = append(stops, func() {
			runtime.GC() // the profile's figures are as of the last GC
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintf(os.Stderr, "qbench: --memprofile: %v\n", err)
			}
			f.Close()
		})
	}
	if tracePath != "" {
		f, err := os.Create(tracePath)
		if err != nil {
			stop()
			return nil, usageError{fmt.Errorf("--trace %s: %w", tracePath, err)}
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			stop()
			return nil, usageError{fmt.Errorf("--trace %s: %w", tracePath, err)}
		}
		stops = append(stops, func() {
			trace.Stop()
			f.Close()
		})
	}
	return stop, nil
}
