package bench

import (
	"runtime"
	"time"

	"qbench/engines"
	"qbench/results"
)

// selfCost is the load generator's own CPU over a run, from getrusage(RUSAGE_SELF) when the
// producers start and when the consumers stop: the same window as the messages it is divided by.
// It is the whole process, so an engine running inside it (engines.InProcess) is included.
// At the same two moments it samples the whole machine (machineload.go: steal, other processes)
// and qbench's garbage collector (gcstat.go), innermost the clock and getrusage.
type selfCost struct {
	startAt, endAt time.Time
	user0, sys0    time.Duration
	user1, sys1    time.Duration
	mach0, mach1   machineSample
	gc0, gc1       gcSample
	idle           *results.MachineIdle
}

func (c *selfCost) start() {
	c.mach0 = readMachine()
	c.idle = readIdle()
	c.gc0 = readGC()
	c.user0, c.sys0 = cpuTimes()
	c.startAt = time.Now()
}

func (c *selfCost) stop() {
	c.endAt = time.Now()
	c.user1, c.sys1 = cpuTimes()
	c.gc1 = readGC()
	c.mach1 = readMachine()
}

// fill sets g's CPU fields (the in-flight ones are the producers' business). messages is what
// the generator handled: messages sent plus deliveries received. engineCPUNs is the engine's
// server process's CPU over the same span (/proc), negative when not known. It returns what else
// took the machine over the span (nil when unknown: not Linux).
func (c *selfCost) fill(g *results.Generator, messages int64, eng engines.Engine, engineCPUNs int64) *results.MachineLoad {
	user, sys := c.user1-c.user0, c.sys1-c.sys0
	g.UserSeconds, g.SysSeconds = user.Seconds(), sys.Seconds()
	wall := c.endAt.Sub(c.startAt)
	g.CPUPerMessageNs, g.CPUShare = cpuFigures(user+sys, wall, runtime.NumCPU(), messages)
	if engineCPUNs >= 0 {
		_, g.EngineCPUShare = cpuFigures(time.Duration(engineCPUNs), wall, runtime.NumCPU(), 0)
	}
	if ip, ok := eng.(engines.InProcess); ok && ip.InProcess() {
		g.InProcessEngine = true
	}
	fillGC(g, c.gc0, c.gc1, wall)
	m := machineFigures(c.mach0, c.mach1, wall, user+sys, time.Duration(engineCPUNs), g.InProcessEngine)
	if m != nil {
		m.Idle = c.idle
	}
	return m
}

// cpuFigures is CPU per message handled, in ns, and the share of the machine's CPU time used:
// cpu / (wall x cpus). Either is 0 when its divisor is.
func cpuFigures(cpu, wall time.Duration, cpus int, messages int64) (perMessageNs, share float64) {
	if messages > 0 {
		perMessageNs = float64(cpu.Nanoseconds()) / float64(messages)
	}
	if wall > 0 && cpus > 0 {
		share = cpu.Seconds() / (wall.Seconds() * float64(cpus))
	}
	return perMessageNs, share
}
