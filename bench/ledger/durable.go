package ledger

import (
	"encoding/binary"
	"slices"
	"sort"
	"sync"
)

// The last durable point (WindowTotals.LastDurableNs) is the newest intended time of an
// acknowledged message not lost, before a window's oldest loss: a query at a point known only at
// the end, over messages the compact ledger no longer keeps one by one. It keeps, per producer,
// the intended times of its plainly settled messages by chunk of retireChunk, and closes a chunk
// (keeping only its range) once no message of any producer can still be lost at a time inside
// it but those already spilled: every producer has answered a message intended after the chunk
// and has nothing older left in its window (the messages of one producer are intended in
// sequence order, as the runner's schedule makes them). For each spilled message that may yet be
// lost at a time x inside the chunk, the chunk's newest time before x is folded into the
// ledger's pins: one entry per such time, the newest over every producer's chunks, since the
// answer is the newest over all of them (a per-chunk pin cost a loss as many entries as there
// are producers). The answer is then exact. A message spilled unanswered and answered only after
// a chunk holding its time closed (a late hole) was not pinned by that chunk: the chunk answers
// it by its oldest time, a bound. A chunk that cannot close while maxOpenChunks newer ones wait
// (a producer that stopped sending, or lags by more than that) is closed by force with pins of
// its own, for what every window holds then; a message intended inside it and sent only after is
// answered by the chunk's oldest time.

// maxOpenChunks bounds the chunks of one producer waiting to close: 2 MB of times.
const maxOpenChunks = 64

// chunk is the intended times of up to retireChunk plainly settled messages of one producer,
// while it is open.
type chunk struct {
	span
	times []int64
}

// span is a chunk's range of intended times: all a closed chunk keeps, with its pins.
type span struct{ min, max int64 }

// pin is a closed chunk's answer for a time x inside its range: its newest time before x, or -1.
type pin struct{ x, before int64 }

// pins are the answers of chunks closed in order (not by force) for the times a loss may fall
// at: per time, the newest settled time before it over every producer's chunks; and the late
// holes, times that became possible losses after chunks holding them had closed.
type pins struct {
	mu     sync.Mutex
	before map[int64]int64
	late   map[int64]bool
}

// add folds a chunk's answer for x in.
func (p *pins) add(x, before int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.before == nil {
		p.before = map[int64]int64{}
	}
	if b, ok := p.before[x]; !ok || before > b {
		p.before[x] = before
	}
}

// lateHole records a time that became a possible loss after chunks holding it may have closed.
func (p *pins) lateHole(x int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.late == nil {
		p.late = map[int64]bool{}
	}
	p.late[x] = true
}

// at is the pinned answer for x (-1: none) and whether x is a late hole.
func (p *pins) at(x int64) (before int64, late bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	before = -1
	if b, ok := p.before[x]; ok {
		before = b
	}
	return before, p.late[x]
}

// settle adds a plainly settled message's intended time. b.mu is held.
func (b *compactBook) settle(t int64) {
	if n := len(b.open); n == 0 || len(b.open[n-1].times) == retireChunk {
		b.open = append(b.open, chunk{span: span{t, t}, times: make([]int64, 0, retireChunk)})
	}
	c := &b.open[len(b.open)-1]
	c.times = append(c.times, t)
	c.min, c.max = min(c.min, t), max(c.max, t)
}

// closable says whether b has a full chunk waiting to close. b.mu is held.
func (b *compactBook) closable() bool { return len(b.open) > 1 }

// closeChunks closes b's waiting chunks while it can (see above). It takes one producer's lock
// at a time.
func (l *Compact) closeChunks(b *compactBook) {
	if !b.closing.CompareAndSwap(false, true) {
		return
	}
	defer b.closing.Store(false)
	for {
		b.mu.Lock()
		if !b.closable() {
			b.mu.Unlock()
			return
		}
		lo, hi := b.open[0].min, b.open[0].max
		force := len(b.open)-1 > l.maxOpen
		b.mu.Unlock()
		var xs []int64
		for _, q := range l.producers {
			q.mu.Lock()
			ok := q.lossesIn(lo, hi, force, &xs)
			q.mu.Unlock()
			if !ok {
				return
			}
		}
		slices.Sort(xs)
		xs = slices.Compact(xs)
		b.mu.Lock()
		c := b.open[0]
		slices.Sort(c.times)
		var own []pin // a forced chunk's own pins
		for _, x := range xs {
			i := sort.Search(len(c.times), func(i int) bool { return c.times[i] >= x })
			p := pin{x: x, before: -1}
			if i > 0 {
				p.before = c.times[i-1]
			}
			if force {
				own = append(own, p)
			} else if p.before >= 0 {
				l.pins.add(p.x, p.before)
			}
		}
		if force {
			if b.forced == nil {
				b.forced = map[int][]pin{}
			}
			b.forced[b.closed.len()] = own
		}
		b.closed.add(c.span)
		b.open[0].times = nil
		b.open = b.open[1:]
		b.mu.Unlock()
	}
}

// lossesIn adds to xs the times in (lo, hi] at which a message of q may yet be lost, and reports
// whether that is all there will ever be (unless force): q answered a message intended after hi,
// and what is left in its window is intended after hi too. q.mu is held.
func (q *compactBook) lossesIn(lo, hi int64, force bool, xs *[]int64) bool {
	if !force {
		if q.answeredMax <= hi {
			return false
		}
		if q.w.n > 0 {
			// An unanswered head is intended no earlier than the message before it.
			head := q.w.head()
			t := q.leftMax
			if head.flags&flagSent != 0 {
				t = head.intended
			}
			if t <= hi {
				return false
			}
		}
	}
	i := sort.Search(len(q.holes), func(i int) bool { return q.holes[i] > lo })
	for ; i < len(q.holes) && q.holes[i] <= hi; i++ {
		*xs = append(*xs, q.holes[i])
	}
	if force {
		q.w.scan(func(_ int, bl *block, o int) {
			if e := bl.ent[o]; e.flags&flagAcked != 0 && e.intended > lo && e.intended <= hi {
				*xs = append(*xs, e.intended)
			}
		})
	}
	return true
}

// hole records a spilled message acknowledged and not delivered to some group: it may be lost.
// b.mu is held.
func (b *compactBook) hole(t int64) {
	i := sort.Search(len(b.holes), func(i int) bool { return b.holes[i] > t })
	b.holes = slices.Insert(b.holes, i, t)
}

// durableBefore is b's newest plainly settled time before x, or -1, but for the answers of
// chunks closed in order that hold x, which are in the ledger's pins. late: x is a late hole.
// b.mu is held.
func (b *compactBook) durableBefore(x int64, late bool) int64 {
	best := int64(-1)
	b.closed.each(func(k int, c span) {
		switch {
		case c.min >= x:
		case c.max < x:
			best = max(best, c.max)
		default:
			own, forced := b.forced[k]
			if !forced {
				if late { // closed before x became a possible loss: a bound
					best = max(best, c.min)
				}
				return
			}
			i := sort.Search(len(own), func(i int) bool { return own[i].x >= x })
			if i < len(own) && own[i].x == x {
				best = max(best, own[i].before)
			} else {
				best = max(best, c.min) // sent after the chunk closed by force: a bound
			}
		}
	})
	for _, c := range b.open {
		if c.max < x {
			best = max(best, c.max)
			continue
		}
		for _, t := range c.times {
			if t < x {
				best = max(best, t)
			}
		}
	}
	return best
}

// spanLog is a producer's closed chunks' ranges in the order they closed, packed: each as the
// ZigZag varints of how much its gap from the previous span's end, and its width, differ from
// the previous span's: a byte or two where a span is 16 (a run of 1 G messages closes some
// 244,000 chunks). Chunks close in sequence order, a producer's intended times follow it, and a
// steady rate gives chunks of about the same length and gaps.
type spanLog struct {
	packed     []byte
	n          int
	end        int64 // the last span's max
	gap, width int64 // the last span's
}

func (l *spanLog) add(c span) {
	gap, width := c.min-l.end, c.max-c.min
	l.packed = binary.AppendVarint(l.packed, gap-l.gap)
	l.packed = binary.AppendVarint(l.packed, width-l.width)
	l.end, l.gap, l.width = c.max, gap, width
	l.n++
}

func (l *spanLog) len() int { return l.n }

// each calls fn with every span in order and its index.
func (l *spanLog) each(fn func(k int, c span)) {
	var end, gap, width int64
	p := l.packed
	for k := range l.n {
		dg, a := binary.Varint(p)
		dw, b := binary.Varint(p[a:])
		p = p[a+b:]
		gap, width = gap+dg, width+dw
		c := span{min: end + gap}
		c.max = c.min + width
		end = c.max
		fn(k, c)
	}
}
