//go:build !linux

package bench

// readMachine is unknown off Linux (no /proc/stat); the result then has no machine_load.
func readMachine() machineSample { return machineSample{} }
