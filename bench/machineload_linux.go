//go:build linux

package bench

import "os"

// readMachine samples the whole machine's CPU counters and load averages from /proc.
func readMachine() machineSample {
	var s machineSample
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		s.cpu, err = parseProcStat(b)
		s.ok = err == nil
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		s.load, err = parseLoadAvg(b)
		s.loadOK = err == nil
	}
	return s
}
