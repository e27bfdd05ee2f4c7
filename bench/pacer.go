package bench

import "time"

// Pacer is the open-loop schedule of one producer: message n is intended for Offset + n*Interval
// after the producer starts. It is pure, so the schedule is tested without clocks or sleeps.
type Pacer struct {
	Interval time.Duration
	// Offset staggers producers so that together they send evenly spaced messages.
	Offset time.Duration
	// Duration ends the schedule: no message is intended at or after it.
	Duration time.Duration
}

// NewPacer returns producer p's share of a total rate (messages/s) split over n producers.
func NewPacer(totalRate float64, p, n int, duration time.Duration) Pacer {
	interval := time.Duration(float64(time.Second) * float64(n) / totalRate)
	if interval <= 0 {
		interval = 1
	}
	return Pacer{Interval: interval, Offset: interval * time.Duration(p) / time.Duration(n), Duration: duration}
}

// IntendedAt is when message n is intended to be sent, measured from the start.
func (p Pacer) IntendedAt(n uint64) time.Duration {
	return p.Offset + time.Duration(n)*p.Interval
}

// Pace says, at elapsed time since the start with sent messages already sent, how many more are
// due now (due > 0 means send them at once: the producer is on time or behind), or else how long
// to wait for the next one. stop is true when the schedule has no more messages.
func (p Pacer) Pace(elapsed time.Duration, sent uint64) (due uint64, wait time.Duration, stop bool) {
	next := p.IntendedAt(sent)
	if next >= p.Duration {
		return 0, 0, true
	}
	if elapsed < next {
		return 0, next - elapsed, false
	}
	// Messages sent..k are due, where k is the last with IntendedAt(k) <= min(elapsed, end).
	horizon := elapsed
	if horizon >= p.Duration {
		horizon = p.Duration - 1
	}
	last := uint64((horizon - p.Offset) / p.Interval)
	return last - sent + 1, 0, false
}
