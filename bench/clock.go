package bench

import (
	"context"
	"time"

	"qbench/engines"
	"qbench/results"
)

// clockSamples is how many round trips the clock offset estimate makes; the least one wins.
const clockSamples = 16

// clockPrepareTimeout bounds the engine's preparation of its clock (Kafka creates a topic and
// waits for its leader), which the per-sample timeout of a second would not allow.
const clockPrepareTimeout = 30 * time.Second

// estimateClock estimates this machine's wall-clock offset against the engine's clock, NTP-style:
// of clockSamples round trips, the one that took least time gives offset = engine time - the
// midpoint of the local send and receive times, within half its round trip (plus half the engine
// clock's resolution, which the engine states: engines.ClockInfo) of the truth. An engine without
// a clock is reported as local, bound unknown.
func estimateClock(ctx context.Context, eng engines.Engine) results.Clock {
	ck, ok := eng.(engines.Clock)
	if !ok {
		return results.Clock{Source: "local", BoundNs: -1, Note: "the engine has no clock to ask: stamps carry this machine's wall clock uncorrected, " +
			"so end-to-end latency across machines is only as good as their clock synchronisation (NTP, chrony)"}
	}
	pctx, cancel := context.WithTimeout(ctx, clockPrepareTimeout)
	info, err := ck.PrepareClock(pctx)
	cancel()
	if err != nil {
		return results.Clock{Source: "local", BoundNs: -1, Note: "the engine's clock could not be prepared (" + err.Error() + "): stamps carry this machine's wall clock uncorrected"}
	}
	best := results.Clock{Source: info.Source, BoundNs: -1, RTTNs: -1}
	var lastErr error
	for range clockSamples {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		t0 := time.Now()
		et, err := ck.EngineTime(cctx)
		t1 := time.Now()
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		best.Samples++
		rtt := t1.Sub(t0) // monotonic
		if best.RTTNs >= 0 && int64(rtt) >= best.RTTNs {
			continue
		}
		mid := t0.Add(rtt / 2).UnixNano() // wall clock
		best.RTTNs = int64(rtt)
		// The engine's clock truncates to its resolution (Redis TIME to the microsecond, Kafka's
		// LogAppendTime to the millisecond): the true instant lies in [et, et+resolution), so the
		// estimate takes its middle and the bound half the step.
		best.OffsetNs = et.UnixNano() + int64(info.Resolution/2) - mid
		best.BoundNs = int64(rtt/2 + info.Resolution/2)
	}
	if best.Samples == 0 {
		return results.Clock{Source: "local", BoundNs: -1, Note: "the engine's clock did not answer (" + lastErr.Error() + "): stamps carry this machine's wall clock uncorrected"}
	}
	return best
}
