package results

// mergeGenerator combines the runs' generator figures: CPU seconds and in-flight waits add up, CPU
// per message is the total CPU over every message handled, and the share of the machine is the
// largest any run reached (the warning it feeds is about a limit, which one busy run hits), for
// qbench's and the engine's alike. GC cycles, pauses and GC CPU add up, the GC CPU share is the
// total over the runs' Go CPU, and the longest pause and the pause share are the largest.
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
		g.GCCycles += rg.GCCycles
		g.GCPauseTotalNs += rg.GCPauseTotalNs
		g.GCPauseMaxNs = max(g.GCPauseMaxNs, rg.GCPauseMaxNs)
		g.GCPauseShare = max(g.GCPauseShare, rg.GCPauseShare)
		g.GCCPUSeconds += rg.GCCPUSeconds
		if rg.GCCPUShare > 0 {
			goCPU += rg.GCCPUSeconds / rg.GCCPUShare
		}
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
