//go:build !linux

package bench

import (
	"errors"

	"qbench/results"
)

// readIdle is unknown off Linux.
func readIdle() *results.MachineIdle { return nil }

// HoldIdlePoll needs Linux's CPU latency QoS.
func HoldIdlePoll() (func(), error) {
	return nil, errors.New("--idle-poll needs Linux (/dev/cpu_dma_latency)")
}
