package bench

import "time"

// Pacer is the open-loop schedule of one producer: message n is intended for Offset + n*Interval
// after the producer starts. It is pure, so the schedule is tested without clocks or sleeps.
type Pacer struct {
	Interval time.Duration
	// Rate, Slot and Slots, when Rate is set (NewPacer sets them), define the schedule exactly:
	// message n of producer Slot of Slots is intended for (Slot + n*Slots)/Rate seconds, computed
	// without accumulating the interval's rounding.
	Rate        float64
	Slot, Slots uint64
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
	return Pacer{Interval: interval, Offset: interval * time.Duration(p) / time.Duration(n), Duration: duration,
		Rate: totalRate, Slot: uint64(p), Slots: uint64(n)}
}

// IntendedAt is when message n is intended to be sent, measured from the start.
func (p Pacer) IntendedAt(n uint64) time.Duration {
	if p.Rate > 0 {
		return time.Duration(float64(p.Slot+n*p.Slots) * float64(time.Second) / p.Rate)
	}
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
	var last uint64
	if p.Rate > 0 {
		last = uint64(float64(horizon-p.IntendedAt(0)) / (float64(time.Second) * float64(p.Slots) / p.Rate))
		// Float division can land one off at an exact boundary; IntendedAt decides.
		for last > 0 && p.IntendedAt(last) > horizon {
			last--
		}
		for p.IntendedAt(last+1) <= horizon {
			last++
		}
	} else {
		last = uint64((horizon - p.Offset) / p.Interval)
	}
	return last - sent + 1, 0, false
}
