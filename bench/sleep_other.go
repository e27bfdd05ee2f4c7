//go:build !linux

package bench

import "time"

func preciseSleep(d time.Duration) { time.Sleep(d) }

// preciseSleepYield sleeps d and records how late it woke (no lead, no spin) in st (nil: none).
func preciseSleepYield(d time.Duration, _ bool, st *pacerStats) {
	asked := time.Now().Add(d)
	time.Sleep(d)
	if st != nil {
		now := time.Now()
		st.precise(now, now.Sub(asked), 0, 0)
	}
}

func coarseSleep(d time.Duration, st *pacerStats) {
	asked := time.Now().Add(d)
	time.Sleep(d)
	if st != nil {
		now := time.Now()
		st.coarse(now, now.Sub(asked))
	}
}

// handoff runs fn when a timer armed by arm expires before disarm.
type handoff struct {
	fn func()
	t  *time.Timer
}

func newHandoff(fn func()) *handoff    { return &handoff{fn: fn} }
func (h *handoff) arm(d time.Duration) { h.t = time.AfterFunc(d, h.fn) }
func (h *handoff) disarm() bool        { return h.t.Stop() }
func (h *handoff) close()              {}
