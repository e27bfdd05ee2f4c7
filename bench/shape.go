package bench

import (
	"math"
	"time"
)

// Segment is a stretch of a rate profile whose rate goes linearly from From to To (messages/s
// over all producers) over Len; a constant rate has From == To.
type Segment struct {
	Len      time.Duration
	From, To float64
}

// Shape is a rate profile as a cumulative count: N(t) messages are offered over all producers by
// t. Intended times are its inverse, so they follow the profile exactly and stay a pure function
// of the message's index. With Period set the segments repeat every Period (a burst); otherwise
// the last segment's final rate holds after them.
type Shape struct {
	Segs   []Segment
	Period time.Duration
	// cum[i] is N at the start of segment i; cum[len(Segs)] is N at the end of the segments.
	cum []float64
}

// NewShape builds a profile from its segments.
func NewShape(segs []Segment, repeat bool) *Shape {
	s := &Shape{Segs: segs, cum: make([]float64, len(segs)+1)}
	var total time.Duration
	for i, g := range segs {
		s.cum[i+1] = s.cum[i] + g.Len.Seconds()*(g.From+g.To)/2
		total += g.Len
	}
	if repeat {
		s.Period = total
	}
	return s
}

// Count is N(t): how many messages the profile offers, over all producers, in [0, t).
func (s *Shape) Count(t time.Duration) float64 {
	var base float64
	if s.Period > 0 {
		k := t / s.Period
		base = float64(k) * s.cum[len(s.Segs)]
		t -= k * s.Period
	}
	for i, g := range s.Segs {
		if t < g.Len {
			tau := t.Seconds()
			return base + s.cum[i] + g.From*tau + (g.To-g.From)*tau*tau/(2*g.Len.Seconds())
		}
		t -= g.Len
	}
	last := s.Segs[len(s.Segs)-1].To
	return base + s.cum[len(s.Segs)] + last*t.Seconds()
}

// At is N's inverse: the time by which x messages have been offered.
func (s *Shape) At(x float64) time.Duration {
	var base time.Duration
	if s.Period > 0 {
		per := s.cum[len(s.Segs)]
		k := math.Floor(x / per)
		base = time.Duration(k) * s.Period
		x -= k * per
	}
	var start time.Duration
	for i, g := range s.Segs {
		if x < s.cum[i+1] || (i == len(s.Segs)-1 && s.Period > 0) {
			return base + start + segAt(g, x-s.cum[i])
		}
		start += g.Len
	}
	last := s.Segs[len(s.Segs)-1].To
	if last <= 0 {
		return math.MaxInt64
	}
	return base + start + time.Duration((x-s.cum[len(s.Segs)])/last*float64(time.Second))
}

// segAt solves From*tau + (To-From)*tau^2/(2 Len) = x for tau, in the form that stays accurate
// when the slope is small.
func segAt(g Segment, x float64) time.Duration {
	if x <= 0 {
		return 0
	}
	a := (g.To - g.From) / (2 * g.Len.Seconds())
	d := g.From*g.From + 4*a*x
	if d < 0 {
		d = 0
	}
	den := g.From + math.Sqrt(d)
	if den <= 0 {
		return g.Len
	}
	return time.Duration(2 * x / den * float64(time.Second))
}

// Mean is the profile's mean rate over [0, d).
func (s *Shape) Mean(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return s.Count(d) / d.Seconds()
}

// RateAt is the profile's instantaneous rate at t (for plots and reports).
func (s *Shape) RateAt(t time.Duration) float64 {
	if s.Period > 0 {
		t %= s.Period
	}
	for _, g := range s.Segs {
		if t < g.Len {
			return g.From + (g.To-g.From)*t.Seconds()/g.Len.Seconds()
		}
		t -= g.Len
	}
	return s.Segs[len(s.Segs)-1].To
}

// poisson gives one producer the arrival points of a unit-rate Poisson process, scaled: point n
// is Slots x (E_0 + ... + E_n) with E_i exponential of mean 1, each drawn from a counter-based
// generator keyed by (seed, producer, i). Producers' processes are independent, so together they
// form a Poisson process of the profile's rate; a point depends only on the seed and its index.
// Sums are kept every poissonBlock points so that any index is found without replaying from 0,
// and a cursor makes the producer's sequential reads O(1).
type poisson struct {
	seed, producer uint64
	scale          float64
	marks          []float64 // marks[b] is the sum of the gaps before point b*poissonBlock
	curIdx         uint64
	curSum         float64 // the sum of gaps 0..curIdx (point curIdx, unscaled)
}

const poissonBlock = 1024

func newPoisson(seed int64, producer, slots int) *poisson {
	p := &poisson{seed: uint64(seed), producer: uint64(producer), scale: float64(slots), marks: []float64{0}}
	p.curIdx, p.curSum = 0, p.gap(0)
	return p
}

// gap is exponential gap i, from splitmix64 of (seed, producer, i): deterministic and random
// access.
func (p *poisson) gap(i uint64) float64 { return -math.Log(unit(mix(p.seed, p.producer, i))) }

// point is arrival n in units of the profile's cumulative count.
func (p *poisson) point(n uint64) float64 {
	if n < p.curIdx || n-p.curIdx > poissonBlock {
		b := n / poissonBlock
		for uint64(len(p.marks)) <= b {
			k := uint64(len(p.marks) - 1)
			sum := p.marks[k]
			for i := k * poissonBlock; i < (k+1)*poissonBlock; i++ {
				sum += p.gap(i)
			}
			p.marks = append(p.marks, sum)
		}
		p.curIdx, p.curSum = b*poissonBlock, p.marks[b]+p.gap(b*poissonBlock)
	}
	for p.curIdx < n {
		p.curIdx++
		p.curSum += p.gap(p.curIdx)
	}
	return p.curSum * p.scale
}
