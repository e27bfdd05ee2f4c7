//go:build !linux

package bench

import "time"

func preciseSleep(d time.Duration) { time.Sleep(d) }

func preciseSleepYield(d time.Duration, _ bool) { time.Sleep(d) }

func coarseSleep(d time.Duration) { time.Sleep(d) }

// handoff runs fn when a timer armed by arm expires before disarm.
type handoff struct {
	fn func()
	t  *time.Timer
}

func newHandoff(fn func()) *handoff    { return &handoff{fn: fn} }
func (h *handoff) arm(d time.Duration) { h.t = time.AfterFunc(d, h.fn) }
func (h *handoff) disarm() bool        { return h.t.Stop() }
func (h *handoff) close()              {}
