//go:build unix

package server

import "syscall"

// cpuSeconds is the process's system and user CPU time.
func cpuSeconds() (sys, user float64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6, float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
}
