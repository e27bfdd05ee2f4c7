//go:build linux

package bench

import (
	"fmt"
	"os"
	"sync"

	"qbench/results"
)

const (
	cpuidleDir    = "/sys/devices/system/cpu/cpuidle/"
	cpuLatencyQoS = "/dev/cpu_dma_latency"
)

// readIdle reads how idle CPUs wait now; nil when nothing could be read.
func readIdle() *results.MachineIdle {
	driver, _ := os.ReadFile(cpuidleDir + "current_driver")
	governor, err := os.ReadFile(cpuidleDir + "current_governor")
	if err != nil {
		governor, _ = os.ReadFile(cpuidleDir + "current_governor_ro")
	}
	var qos []byte
	if f, err := os.Open(cpuLatencyQoS); err == nil {
		b := make([]byte, 4)
		if n, _ := f.Read(b); n == 4 {
			qos = b
		}
		f.Close()
	}
	return idleFigures(string(driver), string(governor), qos)
}

var idleHold struct {
	sync.Mutex
	f *os.File
}

// HoldIdlePoll asks the kernel for a CPU latency limit of 0 until the returned release is called
// (or the process ends): idle CPUs poll instead of halting, for every process on the machine. It
// needs write access to /dev/cpu_dma_latency (root).
func HoldIdlePoll() (release func(), err error) {
	idleHold.Lock()
	defer idleHold.Unlock()
	if idleHold.f != nil {
		return nil, fmt.Errorf("%s: already held", cpuLatencyQoS)
	}
	f, err := os.OpenFile(cpuLatencyQoS, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write([]byte{0, 0, 0, 0}); err != nil { // a binary s32: 0 us
		f.Close()
		return nil, fmt.Errorf("%s: %w", cpuLatencyQoS, err)
	}
	idleHold.f = f
	idlePollHeld.Store(true)
	return func() {
		idleHold.Lock()
		defer idleHold.Unlock()
		if idleHold.f == f {
			idlePollHeld.Store(false)
			f.Close()
			idleHold.f = nil
		}
	}, nil
}
