package results

import (
	"fmt"
	"io"
)

// MachineLoad is what else took the machine while qbench measured, from the kernel's whole-machine
// CPU counters (/proc/stat) read at the same two moments as the generator's own CPU (producers'
// start, consumers' stop): the hypervisor's steal and other processes' CPU, and the load average
// at the start. Nil when not measured (not Linux, or a result from before these figures).
type MachineLoad struct {
	// LoadAvg is the 1, 5 and 15 minute load averages when the producers started.
	LoadAvg [3]float64 `json:"load_avg"`
	// WallSeconds is the window the CPU figures cover; MachineSeconds the machine's CPU time in
	// it as the kernel counted it (every state, idle and steal included: about wall x CPUs).
	WallSeconds    float64 `json:"wall_seconds"`
	MachineSeconds float64 `json:"machine_cpu_seconds"`
	// BusySeconds is user + nice + system + irq + softirq over every CPU.
	BusySeconds float64 `json:"busy_cpu_seconds"`
	// StealSeconds is CPU time the hypervisor gave other guests while this one wanted it;
	// StealShare is that over MachineSeconds.
	StealSeconds float64 `json:"steal_cpu_seconds"`
	StealShare   float64 `json:"steal_share"`
	// OtherCPUSeconds is BusySeconds minus qbench's own CPU minus the engine's server's when
	// known (0 when that comes out negative: /proc/stat counts in 10 ms ticks); OtherCores is it
	// over the window as the kernel counted it (MachineSeconds over the machine's CPUs, about
	// WallSeconds; 1 = one core busy all the run), OtherShare over MachineSeconds.
	OtherCPUSeconds float64 `json:"other_cpu_seconds"`
	OtherCores      float64 `json:"other_cores"`
	OtherShare      float64 `json:"other_share"`
	// OtherIncludesEngine is true when the engine's server CPU was not known, so that
	// OtherCPUSeconds counts it if it runs on this machine (an engine qbench did not start, a
	// Redis Cluster, Kafka: no single server PID in the engine's facts).
	OtherIncludesEngine bool `json:"other_includes_engine,omitempty"`
	// Idle is how the machine's idle CPUs waited at the start (Linux cpuidle), when known.
	Idle *MachineIdle `json:"idle,omitempty"`
}

// MachineIdle is how the machine's idle CPUs wait. On a virtual machine a vCPU that halts when
// idle leaves the host, and its wake-up waits for the host's CPU, which the guest counts as
// steal; one that polls does not (bench/machineidle.go has the figures measured).
type MachineIdle struct {
	// Driver and Governor are the cpuidle driver and governor (/sys/devices/system/cpu/cpuidle;
	// empty when the kernel has none).
	Driver   string `json:"driver,omitempty"`
	Governor string `json:"governor,omitempty"`
	// LatencyLimitUs is the CPU latency limit in force (/dev/cpu_dma_latency, microseconds;
	// 2000000000 is none, -1 unknown: reading it needs root). At 0 idle CPUs poll.
	LatencyLimitUs int64 `json:"latency_limit_us"`
	// PollHeld says this run held the limit at 0 itself (qbench run --idle-poll).
	PollHeld bool `json:"poll_held,omitempty"`
	// Halts says idle CPUs may halt: a cpuidle driver and no latency limit of 0.
	Halts bool `json:"halts"`
}

// idleText is the machine line's words for m ("" when unknown).
func idleText(m *MachineIdle) string {
	switch {
	case m == nil:
		return ""
	case m.PollHeld:
		return "; idle CPUs polled (held by this run: --idle-poll)"
	case !m.Halts:
		return "; idle CPUs polled (a CPU latency limit of 0 was held)"
	default:
		return fmt.Sprintf("; idle CPUs halt (cpuidle %s)", m.Driver)
	}
}

// mergeMachineLoad combines the runs' machine loads: seconds summed, and the shares, cores and
// load averages the largest any run saw (the warnings they feed are about one busy machine or
// one busy repetition, which the sum or the mean would hide). Nil when no run measured it.
func mergeMachineLoad(rs []*Result) *MachineLoad {
	var m *MachineLoad
	for _, r := range rs {
		l := r.Summary.MachineLoad
		if l == nil {
			continue
		}
		if m == nil {
			m = &MachineLoad{}
		}
		for i := range m.LoadAvg {
			m.LoadAvg[i] = max(m.LoadAvg[i], l.LoadAvg[i])
		}
		m.WallSeconds += l.WallSeconds
		m.MachineSeconds += l.MachineSeconds
		m.BusySeconds += l.BusySeconds
		m.StealSeconds += l.StealSeconds
		m.OtherCPUSeconds += l.OtherCPUSeconds
		m.StealShare = max(m.StealShare, l.StealShare)
		m.OtherCores = max(m.OtherCores, l.OtherCores)
		m.OtherShare = max(m.OtherShare, l.OtherShare)
		m.OtherIncludesEngine = m.OtherIncludesEngine || l.OtherIncludesEngine
		m.Idle = mergeIdle(m.Idle, l.Idle)
	}
	return m
}

// mergeIdle keeps the first run's idle policy, halting and unheld if any run's was.
func mergeIdle(a, b *MachineIdle) *MachineIdle {
	if a == nil || b == nil {
		if a == nil {
			a = b
		}
		return a
	}
	c := *a
	c.Halts = a.Halts || b.Halts
	c.PollHeld = a.PollHeld && b.PollHeld
	if b.LatencyLimitUs != a.LatencyLimitUs {
		c.LatencyLimitUs = max(a.LatencyLimitUs, b.LatencyLimitUs)
	}
	return &c
}

// writeMachine prints the machine's state over the run in one line: the load average at the
// start, the hypervisor's steal, other processes' CPU, and qbench's garbage collection.
func writeMachine(w io.Writer, s Summary) {
	m, g := s.MachineLoad, s.Generator
	if m == nil {
		return
	}
	engine := ""
	if m.OtherIncludesEngine {
		engine = ", the engine's server among them if it runs here"
	}
	gc := "GC: no cycle"
	if g.GCCycles > 0 {
		gc = fmt.Sprintf("GC %d cycles, stopped the world %s in all (longest %s), %.0f%% of qbench's CPU",
			g.GCCycles, FormatNs(g.GCPauseTotalNs), FormatNs(g.GCPauseMaxNs), 100*g.GCCPUShare)
	}
	fmt.Fprintf(w, "machine: load average %.2f at the start; steal %.1f%% of the CPU; other processes %.2f cores (%.0f%%%s)%s; qbench's %s\n",
		m.LoadAvg[0], 100*m.StealShare, m.OtherCores, 100*m.OtherShare, engine, idleText(m.Idle), gc)
}
