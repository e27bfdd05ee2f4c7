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
	// WarnStealShare: when the hypervisor gave this share of the machine's CPU to other guests
	// during the run, the machine is shared and its timings are not the engine's alone (figures
	// from a shared machine are off by up to 1.5x).
	WarnStealShare = 0.03
	// WarnLateStealShare: steal at or above this share is named in the late-producers warning.
	// One producer at 10,000 msg/s on redis-server (a 2-vCPU VM, idle vCPUs polling) kept send
	// delay p99 under 1 ms in all 5 runs with steal <= 1.4%, and in none of the 3 with 2.2-4.5%.
	WarnLateStealShare = 0.01
	// WarnOtherCores: other processes using this many cores on average (a quarter of one) took
	// CPU and caches from the run.
	WarnOtherCores = 0.25
	// WarnGCPauseShare: qbench's garbage collector stopping the world for this share of the run
	// delays stamps and receipts enough to show in the tail.
	WarnGCPauseShare = 0.01
	// WarnGCPauseOfP99: one stop-the-world pause at least this multiple of a latency p99 can by
	// itself move that p99 (every message in flight across it is charged the pause);
	// WarnGCPauseMinNs keeps the rule for pauses that matter beside a scheduler's ordinary jitter.
	WarnGCPauseOfP99 = 1.0
	WarnGCPauseMinNs = int64(100_000)
	// WarnTimerSendDelayNs and WarnTimerLateShare: when send delay p99 is above
	// WarnTimerSendDelayNs and the pacer's timer lateness p99 (Generator.TimerWakeLate) is at
	// least WarnTimerLateShare of it, the machine's timers, not qbench's work, made the
	// producers late (a VM whose idle vCPUs halt wakes them 1-5 ms late under load).
	WarnTimerSendDelayNs = int64(200_000)
	WarnTimerLateShare   = 0.5
)

// Each rule's warning begins with its prefix, so that a summary read again (Rewarn) can tell the
// warnings the rules make anew from those a run wrote of itself.
const (
	warnLate       = "producers were late: "
	warnHeld       = "producers were held by the engine: "
	warnQbenchCPU  = "qbench used "
	warnMachineCPU = "qbench ("
	warnInFlight   = "producers reached their in-flight limit "
	warnBehind     = "consumers fell behind: "
	warnSteal      = "the hypervisor took "
	warnOther      = "other processes used "
	warnGCPauses   = "qbench's garbage collector "
	warnTimers     = "the machine's timers woke "
	warnSegment    = "segment "
	warnSegmentTag = ": a partial result; "
)

var rulePrefixes = []string{warnLate, warnHeld, warnQbenchCPU, warnMachineCPU, warnInFlight, warnBehind, warnSteal, warnOther, warnGCPauses, warnTimers}

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
// it to any result file. Nil when there is nothing to say. Each warning is a rule's flag
// (ruleFlags); Assess adds the flags that are no warning of the summary's own.
func Warnings(s Summary) []string {
	var out []string
	for _, f := range ruleFlags(s) {
		out = append(out, f.Text)
	}
	return out
}

// ruleFlags applies every warning rule to a summary: one flag per rule that holds, in a fixed
// order.
func ruleFlags(s Summary) []Flag {
	var out []Flag
	add := func(code string, sev Severity, text string) {
		out = append(out, Flag{Code: code, Severity: sev, Text: text})
	}
	g := s.Generator
	sd, pr := s.Latency["send_delay"].P99, s.Latency["produce"].P99
	if sd >= WarnSendDelayMinNs && pr > 0 && float64(sd) >= WarnSendDelayShare*float64(pr) {
		if g.LateHeldByEngine > g.LateOwn {
			// Every in-flight slot awaited the engine when these fell due: their wait is the
			// engine's latency, which produce latency rightly charges to it.
			add(CodeEngineHeld, SeverityNote, fmt.Sprintf(warnHeld+"send delay p99 %s of produce p99 %s, and %d of the %d messages sent late fell due while every in-flight slot (%d batches) awaited the engine's answer: the wait is the engine's latency (a stall, a crash, or a rate beyond what it answers at this in-flight limit), not the load generator's",
				FormatNs(sd), FormatNs(pr), g.LateHeldByEngine, g.LateHeldByEngine+g.LateOwn, g.InFlight))
		} else {
			late := fmt.Sprintf(warnLate+"send delay p99 %s of produce p99 %s: latency figures describe the load generator, not the engine",
				FormatNs(sd), FormatNs(pr))
			if m := s.MachineLoad; m != nil && m.StealShare >= WarnLateStealShare {
				late += fmt.Sprintf("; the hypervisor took %.1f%% of the machine's CPU (steal) meanwhile, enough on its own to make a paced producer late (a vCPU held by the host stops every send due while it is away)", 100*m.StealShare)
			}
			add(CodeGeneratorLate, SeveritySuspect, late)
		}
	}
	if g.CPUShare >= WarnCPUShare {
		if g.InProcessEngine {
			add(CodeQbenchCPU, SeveritySuspect, fmt.Sprintf(warnQbenchCPU+"%.0f%% of the machine's CPU and the engine runs inside it: the engine shares the generator's CPU, so the figures describe both together",
				100*g.CPUShare))
		} else {
			add(CodeQbenchCPU, SeveritySuspect, fmt.Sprintf(warnQbenchCPU+"%.0f%% of the machine's CPU: the load generator is near its limit, so the figures may describe it rather than the engine (qbench calibrate shows its ceiling)",
				100*g.CPUShare))
		}
	} else if both := g.CPUShare + g.EngineCPUShare; g.EngineCPUShare > 0 && both >= WarnMachineCPUShare {
		add(CodeMachineCPU, SeveritySuspect, fmt.Sprintf(warnMachineCPU+"%.0f%%) and the engine's server (%.0f%%) together used %.0f%% of the machine's CPU: the machine is out of CPU, so the figures describe it rather than the engine alone",
			100*g.CPUShare, 100*g.EngineCPUShare, 100*both))
	}
	if g.InFlightFull > 0 {
		// The wait is measured from the intended send time, so latency stays honest; the flag
		// says the offered load reached the engine late, which the engine's answers caused.
		add(CodeInFlightLimit, SeverityNote, fmt.Sprintf(warnInFlight+"(%d batches) %d times: those messages waited for earlier acknowledgements before being sent (raise in_flight, or the engine is slower than the offered rate)",
			g.InFlight, g.InFlightFull))
	}
	if why := behind(s); len(why) > 0 {
		add(CodeConsumersBehind, SeveritySuspect, warnBehind+strings.Join(why, "; ")+": end-to-end latency includes queueing")
	}
	out = append(out, machineFlags(s)...)
	if w := timerWarning(s); w != "" {
		add(CodeTimers, SeveritySuspect, w)
	}
	if b := s.Generator.InFlightBound; b != "" {
		add(CodeInFlightBound, SeveritySuspect, warnInFlight+"in a closed loop: "+b+"; its throughput is that window over the engine's latency, not the engine's capacity (raise in_flight or batch, or leave both unset for the engine's closed-loop defaults)")
	}
	return out
}

// timerWarning says when the machine's timers explain the send delay: they woke the pacer late
// beyond its lead, by at least WarnTimerLateShare of a send delay p99 above WarnTimerSendDelayNs.
// A woken producer also waits for a CPU, so when qbench itself was short of CPU (WarnCPUShare,
// whose warning says so) the lateness may be its own, and this rule is quiet.
func timerWarning(s Summary) string {
	t, sd := s.Generator.TimerWakeLate, s.Latency["send_delay"].P99
	if t == nil || t.Count == 0 || sd <= WarnTimerSendDelayNs || float64(t.P99) < WarnTimerLateShare*float64(sd) || s.Generator.CPUShare >= WarnCPUShare {
		return ""
	}
	return fmt.Sprintf(warnTimers+"qbench's producers late (p99 %s, max %s) beyond the pacer's lead (up to %s): send delay p99 %s is mostly the machine's scheduling (its timers, halted vCPUs waking, other processes), not the engine's nor qbench's work; on a VM whose idle vCPUs halt, keeping them polling (qbench run --idle-poll) or a quieter machine helps",
		FormatNs(t.P99), FormatNs(t.Max), FormatNs(s.Generator.PacerLeadMaxNs), FormatNs(sd))
}

// machineFlags says when something besides the engine and qbench's own work took the run's
// time: the hypervisor, other processes, or qbench's garbage collector.
func machineFlags(s Summary) []Flag {
	var out []Flag
	const shared, busy = "figures from a shared machine can be off by 1.5x; measure on a quiet machine", "figures from a busy machine can be off by 1.5x; measure on a quiet machine"
	if m := s.MachineLoad; m != nil {
		if m.StealShare >= WarnStealShare {
			halts := ""
			if m.Idle != nil && m.Idle.Halts {
				halts = fmt.Sprintf("; idle vCPUs halt here (cpuidle %s), and the wake-up of a halted vCPU waits for the host, counted as steal: qbench run --idle-poll (root) keeps them polling for the run", m.Idle.Driver)
			}
			out = append(out, suspect(CodeSteal, warnSteal+"%.0f%% of the machine's CPU (steal) during the run: %s%s", 100*m.StealShare, shared, halts))
		}
		if m.OtherCores >= WarnOtherCores {
			engine := ""
			if m.OtherIncludesEngine {
				engine = ", the engine's server among them if it runs on this machine: qbench does not know its CPU"
			}
			out = append(out, suspect(CodeMachineBusy, warnOther+"%.2f cores during the run (%.0f%% of the machine's CPU%s): %s", m.OtherCores, 100*m.OtherShare, engine, busy))
		}
	}
	g := s.Generator
	if g.GCPauseShare >= WarnGCPauseShare {
		out = append(out, suspect(CodeGCPauses, warnGCPauses+"stopped the world for %.1f%% of the run (%d cycles, %s in all): every message in flight across a pause is charged it, so the tail is partly qbench's",
			100*g.GCPauseShare, g.GCCycles, FormatNs(g.GCPauseTotalNs)))
	} else if kind, p99 := lowestP99(s); g.GCPauseMaxNs >= WarnGCPauseMinNs && p99 > 0 && float64(g.GCPauseMaxNs) >= WarnGCPauseOfP99*float64(p99) {
		out = append(out, suspect(CodeGCPauses, warnGCPauses+"stopped the world for %s at once, longer than %s p99 %s: that pause alone can set the p99, so the tail is partly qbench's",
			FormatNs(g.GCPauseMaxNs), kind, FormatNs(p99)))
	}
	return out
}

// lowestP99 is the smallest non-zero p99 of produce and end-to-end latency: the one a pause
// distorts most.
func lowestP99(s Summary) (kind string, p99 int64) {
	for _, k := range []string{"produce", "e2e"} {
		if v := s.Latency[k].P99; v > 0 && (p99 == 0 || v < p99) {
			kind, p99 = k, v
		}
	}
	return kind, p99
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

// suspect is a suspect flag whose text is format applied to args.
func suspect(code, format string, args ...any) Flag {
	return Flag{Code: code, Severity: SeveritySuspect, Text: fmt.Sprintf(format, args...)}
}
