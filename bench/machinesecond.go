package bench

import (
	"time"

	"qbench/engines"
	"qbench/results"
)

// machinePoint is the machine's counters, qbench's own CPU and the engine's server's at one
// moment: two of them a second apart give the series' per-second machine figures.
type machinePoint struct {
	at   time.Time
	mach machineSample
	own  time.Duration
	eng  procSample // ok false when the engine's server is not known
}

// machineSecond is what else took the machine since the last harvest (nil off Linux). The first
// second starts from the generator's own sample at the producers' start.
func (s *sampler) machineSecond() *results.IntervalMachine {
	r := s.r
	if !s.machPrev.mach.ok {
		if !r.cost.mach0.ok {
			return nil
		}
		s.machPrev = machinePoint{at: r.cost.startAt, mach: r.cost.mach0, own: r.cost.user0 + r.cost.sys0, eng: r.procStart}
	}
	u, sys := cpuTimes()
	cur := machinePoint{at: time.Now(), mach: readMachine(), own: u + sys}
	if pid := r.procs.pid(); pid > 0 {
		cur.eng = readProc(pid) // the server's current process: a crash fault restarts it
	}
	prev := s.machPrev
	s.machPrev = cur
	engineCPU := time.Duration(-1)
	if prev.eng.ok && cur.eng.ok && prev.eng.pid == cur.eng.pid {
		engineCPU = time.Duration(cur.eng.cpuNs - prev.eng.cpuNs)
	}
	ip, inside := r.eng.(engines.InProcess)
	m := machineFigures(prev.mach, cur.mach, cur.at.Sub(prev.at), cur.own-prev.own, engineCPU, inside && ip.InProcess())
	if m == nil {
		return nil
	}
	return &results.IntervalMachine{StealShare: m.StealShare, OtherCores: m.OtherCores}
}
