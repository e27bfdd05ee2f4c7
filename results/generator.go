package results

// mergeGenerator combines the runs' generator figures: CPU seconds and in-flight waits add up, CPU
// per message is the total CPU over every message handled, and the share of the machine is the
// largest any run reached (the warning it feeds is about a limit, which one busy run hits), for
// qbench's and the engine's alike.
func mergeGenerator(rs []*Result) Generator {
	var g Generator
	var messages int64
	for _, r := range rs {
		rg := r.Summary.Generator
		g.UserSeconds += rg.UserSeconds
		g.SysSeconds += rg.SysSeconds
		g.CPUShare = max(g.CPUShare, rg.CPUShare)
		g.EngineCPUShare = max(g.EngineCPUShare, rg.EngineCPUShare)
		g.InProcessEngine = g.InProcessEngine || rg.InProcessEngine
		g.InFlight = max(g.InFlight, rg.InFlight)
		g.InFlightFull += rg.InFlightFull
		messages += r.Summary.Ledger.Sent + r.Summary.Ledger.Deliveries
	}
	if messages > 0 {
		g.CPUPerMessageNs = (g.UserSeconds + g.SysSeconds) * 1e9 / float64(messages)
	}
	return g
}
