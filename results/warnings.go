package results

import (
	"fmt"
	"strings"
)

// Thresholds of the warnings, in one place. Each marks the point where a figure in the summary
// stops describing the engine alone, as wrk2 and k6 warn when the load generator falls behind.
const (
	// WarnSendDelayShare: when the producers' own lateness (send delay p99) is at least this
	// share of produce latency p99, most of the produce latency is the generator's, not the
	// engine's.
	WarnSendDelayShare = 0.5
	// WarnSendDelayMinNs keeps the send-delay warning for lateness that matters: below 1 ms it is
	// the timer's and scheduler's ordinary jitter (nanosleep overshoots ~60 us here), and a fast
	// engine's sub-millisecond produce p99 would otherwise always trip it.
	WarnSendDelayMinNs = int64(1_000_000)
	// WarnCPUShare: a generator using this share of every core is short of CPU for itself, and
	// its timing (pacing, receipt stamps) degrades before it reaches 100%.
	WarnCPUShare = 0.8
	// WarnMachineCPUShare: when qbench and the engine's server together use this share of
	// every core, the machine is out of CPU: the figures describe that limit, not the engine.
	WarnMachineCPUShare = 0.8
	// WarnDeliverShare: consumers delivering less than this share of the produced rate (per
	// receiving group) fell behind over the measured window.
	WarnDeliverShare = 0.9
	// WarnLagSeconds: a backlog of more than this many seconds of produced traffic is queueing,
	// not transit, and end-to-end latency then measures the queue.
	WarnLagSeconds = 1.0
	// WarnLagMin ignores small backlogs at low rates (a batch or two in flight).
	WarnLagMin = 1000
)

// Each rule's warning begins with its prefix, so that a summary read again (Rewarn) can tell the
// warnings the rules make anew from those a run wrote of itself.
const (
	warnLate       = "producers were late: "
	warnQbenchCPU  = "qbench used "
	warnMachineCPU = "qbench ("
	warnInFlight   = "producers reached their in-flight limit "
	warnBehind     = "consumers fell behind: "
	warnSegment    = "segment "
	warnSegmentTag = ": a partial result; "
)

var rulePrefixes = []string{warnLate, warnQbenchCPU, warnMachineCPU, warnInFlight, warnBehind}

// Rewarn is Warnings(s) followed by every warning of earlier that no rule makes, each once, in
// order: a run's own account of itself (the message cap stopped it, say) is no figure a merge or
// a segment can read again, so it is kept, while the rules' warnings are made anew from s's
// figures and segments' partial-result notes (SegmentWarning) are dropped.
func Rewarn(s Summary, earlier ...[]string) []string {
	out := Warnings(s)
	seen := map[string]bool{}
	for _, w := range out {
		seen[w] = true
	}
	for _, list := range earlier {
		for _, w := range list {
			if !seen[w] && !ruleWarning(w) {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

func ruleWarning(w string) bool {
	if strings.HasPrefix(w, warnSegment) && strings.Contains(w, warnSegmentTag) {
		return true
	}
	for _, p := range rulePrefixes {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// SegmentWarning says that segment index of count of run is a partial result; a merge of the
// segments drops it (Rewarn).
func SegmentWarning(index, count int, runID string) string {
	return fmt.Sprintf(warnSegment+"%d/%d of run %s"+warnSegmentTag+"lost, queued and duplicates across segments are known only once qbench merge joins all %d",
		index, count, runID, count)
}

// Warnings says, in plain words, when a summary's figures describe the load generator (or a
// backlog) rather than the engine. It reads only the summary, so compare and reports can apply
// it to any result file. Nil when there is nothing to say.
func Warnings(s Summary) []string {
	var out []string
	sd, pr := s.Latency["send_delay"].P99, s.Latency["produce"].P99
	if sd >= WarnSendDelayMinNs && pr > 0 && float64(sd) >= WarnSendDelayShare*float64(pr) {
		out = append(out, fmt.Sprintf(warnLate+"send delay p99 %s of produce p99 %s: latency figures describe the load generator, not the engine",
			FormatNs(sd), FormatNs(pr)))
	}
	g := s.Generator
	if g.CPUShare >= WarnCPUShare {
		if g.InProcessEngine {
			out = append(out, fmt.Sprintf(warnQbenchCPU+"%.0f%% of the machine's CPU and the engine runs inside it: the engine shares the generator's CPU, so the figures describe both together",
				100*g.CPUShare))
		} else {
			out = append(out, fmt.Sprintf(warnQbenchCPU+"%.0f%% of the machine's CPU: the load generator is near its limit, so the figures may describe it rather than the engine (qbench calibrate shows its ceiling)",
				100*g.CPUShare))
		}
	} else if both := g.CPUShare + g.EngineCPUShare; g.EngineCPUShare > 0 && both >= WarnMachineCPUShare {
		out = append(out, fmt.Sprintf(warnMachineCPU+"%.0f%%) and the engine's server (%.0f%%) together used %.0f%% of the machine's CPU: the machine is out of CPU, so the figures describe it rather than the engine alone",
			100*g.CPUShare, 100*g.EngineCPUShare, 100*both))
	}
	if g.InFlightFull > 0 {
		out = append(out, fmt.Sprintf(warnInFlight+"(%d batches) %d times: those messages waited for earlier acknowledgements before being sent (raise in_flight, or the engine is slower than the offered rate)",
			g.InFlight, g.InFlightFull))
	}
	if why := behind(s); len(why) > 0 {
		out = append(out, warnBehind+strings.Join(why, "; ")+": end-to-end latency includes queueing")
	}
	return out
}

// behind gives the evidence that consumers did not keep up, if any.
func behind(s Summary) []string {
	var why []string
	if q := s.Ledger.Queued; q > 0 {
		why = append(why, fmt.Sprintf("%d acknowledged messages were still queued at the end (not lost)", q))
	}
	perGroup := s.DeliverRatePerGroup
	if perGroup == 0 && s.DeliverRate > 0 {
		perGroup = s.DeliverRate / float64(max(s.Groups, 1))
	}
	// Lost messages are a shortfall too, but the ledger already names them: this rule is only
	// for messages that were late, not gone.
	if s.Ledger.Lost == 0 && s.ProduceRate > 0 && s.MeasuredSeconds > 0 && perGroup < WarnDeliverShare*s.ProduceRate {
		why = append(why, fmt.Sprintf("delivered %.0f msg/s per group against %.0f msg/s produced", perGroup, s.ProduceRate))
	}
	if s.ProduceRate > 0 && s.LagMax >= WarnLagMin && float64(s.LagMax) > WarnLagSeconds*s.ProduceRate {
		why = append(why, fmt.Sprintf("the backlog reached %d messages, %.1f s of production", s.LagMax, float64(s.LagMax)/s.ProduceRate))
	}
	return why
}
