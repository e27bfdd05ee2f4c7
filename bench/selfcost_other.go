//go:build !unix

package bench

import "time"

// cpuTimes is unknown off Unix; the generator's CPU figures are then 0.
func cpuTimes() (user, sys time.Duration) { return 0, 0 }
