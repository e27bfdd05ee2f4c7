//go:build !linux

package bench

import "time"

func preciseSleep(d time.Duration) { time.Sleep(d) }
