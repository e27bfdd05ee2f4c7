package bench

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"

	"qbench/results"
)

// cpuStat is the first line of /proc/stat: the whole machine's CPU time by state, summed over
// every CPU, in clock ticks (USER_HZ), and the number of CPUs it sums (the "cpuN" lines: every
// CPU of the machine, which a process's CPU affinity does not change). Guest time is inside user
// and nice already, so it is not kept.
type cpuStat struct {
	user, nice, system, idle, iowait, irq, softirq, steal int64
	cpus                                                  int
}

// busy is the time the machine's CPUs ran something: user + nice + system + irq + softirq.
func (c cpuStat) busy() int64 { return c.user + c.nice + c.system + c.irq + c.softirq }

// total is every state, idle, iowait and steal included: about wall time x CPUs.
func (c cpuStat) total() int64 { return c.busy() + c.idle + c.iowait + c.steal }

func (c cpuStat) sub(o cpuStat) cpuStat {
	return cpuStat{c.user - o.user, c.nice - o.nice, c.system - o.system, c.idle - o.idle,
		c.iowait - o.iowait, c.irq - o.irq, c.softirq - o.softirq, c.steal - o.steal, c.cpus}
}

// parseProcStat reads the "cpu " line of /proc/stat and counts the "cpuN" lines. Kernels before
// 2.6.11 have no steal column; a missing column reads 0.
func parseProcStat(b []byte) (cpuStat, error) {
	var out cpuStat
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && len(f[0]) > 3 && strings.HasPrefix(f[0], "cpu") {
			out.cpus++
		}
		if len(f) == 0 || f[0] != "cpu" || found {
			continue
		}
		if len(f) < 5 {
			return cpuStat{}, errors.New("/proc/stat: short cpu line")
		}
		var v [8]int64
		for i := range v {
			if i+1 >= len(f) {
				break
			}
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return cpuStat{}, errors.New("/proc/stat: cpu line: " + err.Error())
			}
			v[i] = n
		}
		out.user, out.nice, out.system, out.idle, out.iowait, out.irq, out.softirq, out.steal = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		found = true
	}
	if !found {
		return cpuStat{}, errors.New("/proc/stat: no cpu line")
	}
	out.cpus = max(out.cpus, 1)
	return out, nil
}

// parseLoadAvg reads the three load averages of /proc/loadavg.
func parseLoadAvg(b []byte) ([3]float64, error) {
	var out [3]float64
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return out, errors.New("/proc/loadavg: fewer than three fields")
	}
	for i := range out {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return out, errors.New("/proc/loadavg: " + err.Error())
		}
		out[i] = v
	}
	return out, nil
}

// machineSample is the machine's CPU counters at one moment, and its load averages.
type machineSample struct {
	cpu    cpuStat
	load   [3]float64
	ok     bool
	loadOK bool
}

// machineFigures is what else took the machine between start and end: steal, and the busy time
// neither qbench (ownCPU, getrusage) nor the engine's server (engineCPU, /proc/PID/stat; negative
// when not known) accounts for. engineInside says the engine runs in qbench's process, so its
// CPU is in ownCPU. Nil when either sample failed or no tick passed.
func machineFigures(start, end machineSample, wall, ownCPU, engineCPU time.Duration, engineInside bool) *results.MachineLoad {
	if !start.ok || !end.ok {
		return nil
	}
	d := end.cpu.sub(start.cpu)
	if d.total() <= 0 || wall <= 0 {
		return nil
	}
	tick := func(n int64) float64 { return float64(n) / clockTicks }
	m := &results.MachineLoad{
		WallSeconds:    wall.Seconds(),
		MachineSeconds: tick(d.total()),
		BusySeconds:    tick(d.busy()),
		StealSeconds:   tick(max(d.steal, 0)),
	}
	if start.loadOK {
		m.LoadAvg = start.load
	}
	m.StealShare = m.StealSeconds / m.MachineSeconds
	other := m.BusySeconds - ownCPU.Seconds()
	switch {
	case engineInside:
	case engineCPU >= 0:
		other -= engineCPU.Seconds()
	default:
		m.OtherIncludesEngine = true
	}
	// /proc/stat counts whole ticks per CPU, getrusage to the microsecond: a quiet machine can
	// come out a tick or two below zero. Cores are over the window as the kernel counted it (its
	// ticks over its CPUs), so that tick rounding cancels: at most every CPU, even over a short
	// window.
	m.OtherCPUSeconds = max(other, 0)
	m.OtherCores = m.OtherCPUSeconds / (m.MachineSeconds / float64(end.cpu.cpus))
	m.OtherShare = m.OtherCPUSeconds / m.MachineSeconds
	return m
}
