package bench

import (
	"encoding/binary"
	"strings"
	"sync/atomic"

	"qbench/results"
)

// How the machine's idle CPUs wait, and the hold that keeps them polling (--idle-poll).
//
// On a virtual machine an idle vCPU that halts leaves the host, and waking it (a timer, a packet,
// another vCPU's wake-up of a task) goes through the hypervisor, which counts the wait for the
// host's CPU as steal. Measured on a 2-vCPU Firecracker VM (cpuidle driver haltpoll,
// guest_halt_poll_ns 0): 11-24% steal at load average 1 with idle
// vCPUs halting, 0.2-1.4% while a CPU latency limit of 0 was held, and one producer's send delay
// p99 at 10,000 msg/s 2.7-4.8 ms against 0.17-0.63 ms. A limit of 0 on /dev/cpu_dma_latency (the
// kernel's CPU latency QoS, what cyclictest and tuned's latency-performance profile hold) makes
// the governor pick the polling state only; the kernel drops it when the file is closed, so a
// killed holder leaves nothing behind.

// idlePollHeld says this process holds a CPU latency limit of 0 (HoldIdlePoll).
var idlePollHeld atomic.Bool

// noLatencyLimit is the kernel's default CPU latency QoS value (PM_QOS_DEFAULT_VALUE, us): no
// limit.
const noLatencyLimit = 2_000_000_000

// idleFigures describes the machine's idle policy from the cpuidle driver and governor (empty
// when the kernel has no cpuidle) and the raw /dev/cpu_dma_latency value (nil when it could not
// be read: it needs root).
func idleFigures(driver, governor string, qos []byte) *results.MachineIdle {
	driver, governor = strings.TrimSpace(driver), strings.TrimSpace(governor)
	if driver == "" && qos == nil {
		return nil
	}
	m := &results.MachineIdle{Driver: driver, Governor: governor, LatencyLimitUs: -1, PollHeld: idlePollHeld.Load()}
	if len(qos) == 4 {
		m.LatencyLimitUs = int64(int32(binary.LittleEndian.Uint32(qos)))
	}
	m.Halts = driver != "" && driver != "none" && m.LatencyLimitUs != 0
	return m
}
