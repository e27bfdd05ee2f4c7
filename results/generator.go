package results

import (
	"fmt"
	"io"
)

// mergeGenerator combines the runs' generator figures: CPU seconds and in-flight waits add up, CPU
// per message is the total CPU over every message handled, and the share of the machine is the
// largest any run reached (the warning it feeds is about a limit, which one busy run hits), for
// qbench's and the engine's alike. GC cycles, pauses and GC CPU add up, the GC CPU share is the
// total over the runs' Go CPU, and the longest pause and the pause share are the largest. The
// pacer's timer figures are counted over all the runs, and their percentiles (which the runs'
// summaries cannot add up exactly) and the pacer's lead are the largest: a bound, like the
// warning they feed.
func mergeGenerator(rs []*Result) Generator {
	var g Generator
	var messages int64
	var goCPU float64 // the runtime's estimate of each run's Go CPU, read back from its share
	for _, r := range rs {
		rg := r.Summary.Generator
		g.UserSeconds += rg.UserSeconds
		g.SysSeconds += rg.SysSeconds
		g.CPUShare = max(g.CPUShare, rg.CPUShare)
		g.EngineCPUShare = max(g.EngineCPUShare, rg.EngineCPUShare)
		g.InProcessEngine = g.InProcessEngine || rg.InProcessEngine
		g.InFlight = max(g.InFlight, rg.InFlight)
		g.InFlightFull += rg.InFlightFull
		g.LateHeldByEngine += rg.LateHeldByEngine
		g.LateOwn += rg.LateOwn
		if g.InFlightBound == "" {
			g.InFlightBound = rg.InFlightBound
		}
		g.GCCycles += rg.GCCycles
		g.GCPauseTotalNs += rg.GCPauseTotalNs
		g.GCPauseMaxNs = max(g.GCPauseMaxNs, rg.GCPauseMaxNs)
		g.GCPauseShare = max(g.GCPauseShare, rg.GCPauseShare)
		g.GCCPUSeconds += rg.GCCPUSeconds
		if rg.GCCPUShare > 0 {
			goCPU += rg.GCCPUSeconds / rg.GCCPUShare
		}
		g.TimerWakeLate = mergePacerFigure(g.TimerWakeLate, rg.TimerWakeLate)
		g.PacerSpin = mergePacerFigure(g.PacerSpin, rg.PacerSpin)
		g.CoarseWakeLate = mergePacerFigure(g.CoarseWakeLate, rg.CoarseWakeLate)
		g.PacerLeadP50Ns = max(g.PacerLeadP50Ns, rg.PacerLeadP50Ns)
		g.PacerLeadMaxNs = max(g.PacerLeadMaxNs, rg.PacerLeadMaxNs)
		messages += r.Summary.Ledger.Sent + r.Summary.Ledger.Deliveries
	}
	if goCPU > 0 {
		g.GCCPUShare = g.GCCPUSeconds / goCPU
	}
	if messages > 0 {
		g.CPUPerMessageNs = (g.UserSeconds + g.SysSeconds) * 1e9 / float64(messages)
	}
	return g
}

// mergePacerFigure is a and b counted together, each percentile the larger; nil when both are.
func mergePacerFigure(a, b *PacerFigure) *PacerFigure {
	if a == nil || b == nil {
		if b == nil {
			return a
		}
		c := *b
		return &c
	}
	return &PacerFigure{Count: a.Count + b.Count, P50: max(a.P50, b.P50), P99: max(a.P99, b.P99), Max: max(a.Max, b.Max)}
}

// PacerLineNs is the timer lateness (p99) from which the summary prints the pacer's line: below
// it the timers are the machine's ordinary jitter, which the pacer's lead absorbs.
const PacerLineNs = int64(100_000)

// writePacer prints, when the machine's timers woke the producers late enough to matter, how
// late, against the pacer's lead and spin.
func writePacer(w io.Writer, g Generator) {
	t := g.TimerWakeLate
	if t == nil || t.P99 < PacerLineNs {
		return
	}
	spin := ""
	if sp := g.PacerSpin; sp != nil {
		spin = fmt.Sprintf("; spun p50 %s, p99 %s after waking", FormatNs(sp.P50), FormatNs(sp.P99))
	}
	fmt.Fprintf(w, "pacer: the machine's timers woke producers late by p50 %s, p99 %s, max %s over %d sleeps, against a lead of p50 %s, max %s%s\n",
		FormatNs(t.P50), FormatNs(t.P99), FormatNs(t.Max), t.Count, FormatNs(g.PacerLeadP50Ns), FormatNs(g.PacerLeadMaxNs), spin)
}
