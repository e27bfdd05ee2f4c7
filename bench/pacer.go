package bench

import (
	"math"
	"time"
)

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
	// Shape, when set, is the rate profile (Rate is then unused): the k-th message over all
	// producers is intended when the profile's cumulative count reaches k.
	Shape *Shape
	// arrivals, when set, replaces even spacing with a Poisson process (see poisson).
	arrivals *poisson
}

// NewShapedPacer is producer p's share of n of a profile (nil: a constant total rate) with
// uniform or poisson arrivals, seeded.
func NewShapedPacer(totalRate float64, shape *Shape, poissonArrivals bool, seed int64, p, n int, duration time.Duration) Pacer {
	if shape != nil {
		totalRate = 1 // unused: the shape decides the times (and 0 would make NewPacer divide by it)
	}
	pc := NewPacer(totalRate, p, n, duration)
	if shape != nil {
		pc.Shape = shape
		pc.Rate = 1 // keeps the exact-schedule path; the shape decides the times
	}
	if poissonArrivals {
		pc.arrivals = newPoisson(seed, p, n)
	}
	return pc
}

// shaped says the schedule is not plain even spacing at a constant rate.
func (p Pacer) shaped() bool { return p.Shape != nil || p.arrivals != nil }

// shapedAt is IntendedAt for a profile or Poisson arrivals: the message's point in units of the
// cumulative count, mapped through the profile's inverse.
func (p Pacer) shapedAt(n uint64) time.Duration {
	var u float64
	if p.arrivals != nil {
		u = p.arrivals.point(n)
	} else {
		u = float64(p.Slot + n*p.Slots)
	}
	if p.Shape == nil {
		return saturate(u * float64(time.Second) / p.Rate)
	}
	return p.Shape.At(u)
}

// CountBefore is how many of this producer's messages are intended before t (and before the
// end of the schedule): the offered load up to t.
func (p Pacer) CountBefore(t time.Duration) uint64 {
	if t > p.Duration {
		t = p.Duration
	}
	if p.IntendedAt(0) >= t {
		return 0
	}
	return p.lastAtOrBefore(0, t-1) + 1
}

// lastAtOrBefore is the last index k >= from with IntendedAt(k) <= h, given IntendedAt(from) <= h:
// a galloping search, so that a producer far behind finds its due count in O(log) steps.
func (p Pacer) lastAtOrBefore(from uint64, h time.Duration) uint64 {
	lo, step := from, uint64(1)
	// At most 64 doublings: a schedule whose times never pass h (a rate so high, or an index so
	// far, that they saturate) ends the search at the largest index instead of spinning.
	for step != 0 && lo+step > lo && p.IntendedAt(lo+step) <= h {
		lo += step
		step *= 2
	}
	if step == 0 || lo+step <= lo {
		return lo
	}
	hi := lo + step // IntendedAt(hi) > h
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p.IntendedAt(mid) <= h {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// NewPacer returns producer p's share of a total rate (messages/s) split over n producers.
func NewPacer(totalRate float64, p, n int, duration time.Duration) Pacer {
	interval := saturate(float64(time.Second) * float64(n) / totalRate)
	if interval <= 0 {
		interval = 1
	}
	return Pacer{Interval: interval, Offset: saturate(float64(interval) * float64(p) / float64(n)), Duration: duration,
		Rate: totalRate, Slot: uint64(p), Slots: uint64(n)}
}

// IntendedAt is when message n is intended to be sent, measured from the start.
func (p Pacer) IntendedAt(n uint64) time.Duration {
	if p.shaped() {
		return p.shapedAt(n)
	}
	if p.Rate > 0 {
		return saturate(float64(p.Slot+n*p.Slots) * float64(time.Second) / p.Rate)
	}
	return p.Offset + time.Duration(n)*p.Interval
}

// saturate converts nanoseconds to a Duration, the largest one for a time past it (or NaN):
// converting such a float is undefined in Go (amd64 gives the most negative Duration, which
// reads as due long ago and made CountBefore's search spin at a rate of 1e-300).
func saturate(ns float64) time.Duration {
	if !(ns < math.MaxInt64) {
		return math.MaxInt64
	}
	if ns < math.MinInt64 {
		return math.MinInt64
	}
	return time.Duration(ns)
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
	if p.shaped() {
		last = p.lastAtOrBefore(sent, horizon)
	} else if p.Rate > 0 {
		est := float64(horizon-p.IntendedAt(0)) / (float64(time.Second) * float64(p.Slots) / p.Rate)
		if !(est >= 0) {
			est = 0
		}
		// Bounded by the horizon's own count, so that the corrections below take a step or two.
		last = uint64(min(est, float64(horizon)))
		// Float division can land one off at an exact boundary; IntendedAt decides.
		for last > 0 && p.IntendedAt(last) > horizon {
			last--
		}
		if p.IntendedAt(last+1) <= horizon { // galloping, not step by step: O(log) at any rate
			last = p.lastAtOrBefore(last+1, horizon)
		}
	} else {
		last = uint64((horizon - p.Offset) / p.Interval)
	}
	return last - sent + 1, 0, false
}
