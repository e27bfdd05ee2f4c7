package ledger

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// Compact is a ledger whose memory is bounded by what is unresolved, not by what was sent. It
// gives the answers Ledger gives (Ledger stays the reference, and a differential test holds the
// two to the same totals, lost lists and fault windows), from this per producer:
//
//   - a watermark (lo): every message below it has left the window, either settled plainly
//     (acknowledged and delivered exactly once to every group: only counted, in retired) or
//     spilled, kept one by one in sequence order (failed, duplicated, delivered unacknowledged,
//     or still unresolved): some 24 bytes and 4 per group each;
//   - the further deliveries of plainly settled messages (duplicates), one entry per message and
//     group, packed (again.go);
//   - a window from lo on (compact_window.go): each message's marks, as Ledger keeps them, until
//     it settles, by block of 1024; deep in a long window (a backlog), a block whose messages are
//     all acknowledged and have reached each group once or not yet is frozen to a few bits a
//     message (dense.go);
//   - the intended times of plainly settled messages, by chunk of retireChunk until no loss can
//     fall inside the chunk (durable.go), for the last durable point.
//
// Messages of one producer are mostly resolved in order, so the window is the backlog plus the
// out-of-order span. A hole (a lost message, a send never answered) would pin the watermark and
// grow the window with everything after it: an unresolved head more than spillWindow behind every
// group's delivery frontier is spilled to sp, so the window holds a backlog (what lies beyond a
// group's frontier) in sequence and holes one by one. A spilled message delivered since, once and
// everywhere, is moved to the settled count (compactSpilled).
//
// It assumes what the runner does: a producer's messages are intended in sequence order. What it
// keeps less of than Ledger, and what that costs:
//   - intended send times of plainly settled messages: a later duplicate of one is charged to a
//     fault window by the intended time its delivery carries (DeliveredAt: the stamp's); the last
//     durable point is exact unless a chunk had to close by force (see durable.go);
//   - batch boundaries and delivery shards of plainly settled messages: a first delivery of a
//     spilled message is judged for order against its batch's end as recorded when it spilled,
//     and (SetDeliveryShards) a settled batch-mate counts as on its shard.
//
// It has no Book, Union, SetRemote or receive-only form: a segmented or consume-only run uses
// Ledger.
type Compact struct {
	rules
	producers      []*compactBook
	groups         int
	acked          atomic.Int64
	firstDelivered []atomic.Int64
	// held counts the messages kept one by one (Kept), dense the bytes of the window's frozen
	// blocks (DenseBytes), for the runner's memory bound.
	held, dense atomic.Int64
	// spillAt is how far behind every group's delivery frontier an unresolved head is spilled
	// (spillWindow; tests lower it), maxOpen how many chunks may wait to close (maxOpenChunks).
	spillAt, maxOpen int
	// pins answer the last durable point for the times a loss may fall at (durable.go).
	pins *pins
}

const (
	// spillWindow is how far behind the delivery frontier of every group an unresolved message
	// leaves the window: a hole (a lost message) pins at most this many messages of one producer,
	// 160 kB with one group (the memory budget counts it: scenarios.BacklogBound), while what
	// is beyond a group's frontier (a backlog) stays in the window, and what is about to be
	// delivered is not spilled.
	spillWindow = 8192
	// spillBlock is how many spilled messages must have settled plainly since (and a quarter of
	// the spilled) before they are moved to the settled count (compactSpilled).
	spillBlock = 1024
	// retireChunk is how many plainly settled messages share one span of intended times.
	retireChunk = 4096
)

// entry is one message's marks in the window.
type entry struct {
	intended int64
	after    uint32
	flags    uint8
}

// spilled is one message that left the window without settling plainly (failed, delivered more
// than once, or still unresolved). Its per-group marks are in compactBook.spD and spSh.
type spilled struct {
	seq      uint64
	intended int64
	after    uint32
	// batchEnd is the distance to the next batch start as the window knew it when the message
	// left it (0: none within maxBatchScan).
	batchEnd uint16
	flags    uint8
}

// foundBit marks, in a spilled message's delivery count for a group, that the final sweep found
// it held for the group.
const foundBit = 1 << 31

// redelivered is a message that settled plainly and was delivered again to one group: extra
// deliveries beyond the first, and the intended time the delivery carried.
type redelivered struct {
	intended int64
	extra    uint32
}

type compactBook struct {
	mu   sync.Mutex
	held *atomic.Int64 // the ledger's
	pins *pins         // the ledger's
	// w is the window: the marks of the messages from the watermark (w.lo) on.
	w      window
	groups int
	// sp holds the spilled messages in sequence order (they leave the window in order); spD
	// their delivery counts, groups per message, and spSh (SetDeliveryShards) their shards.
	sp   []spilled
	spD  []uint32
	spSh []uint16
	// again holds the further deliveries of plainly settled messages, by seq*groups+group.
	again dupSet
	// retired counts plainly settled messages; open keeps their intended times by chunk until
	// the chunk closes (durable.go) to its range in closed; a chunk k closed by force keeps its
	// own pins in forced[k] (the others fold theirs into the ledger's pins).
	retired int64
	open    []chunk
	closed  spanLog
	forced  map[int][]pin
	closing atomic.Bool
	// holes are the intended times of spilled messages acknowledged and not delivered to some
	// group, in order; answeredMax the newest intended time answered, leftMax the newest of the
	// messages that left the window.
	holes       []int64
	answeredMax int64
	leftMax     int64
	// spPlain counts spilled messages that settled plainly since, for compactSpilled.
	spPlain   int
	highest   []uint64
	reordered int64
	// found[g] is a bitmap of seq-foundBase for window messages found held at the end.
	foundBase uint64
	found     [][]uint64
	// front is each group's delivery frontier: one past the highest sequence number delivered.
	front []uint64
}

// NewCompact makes a compact ledger for n producers and groups receiving groups.
func NewCompact(n, groups int) *Compact {
	groups = max(groups, 1)
	l := &Compact{producers: make([]*compactBook, n), groups: groups, firstDelivered: make([]atomic.Int64, groups), spillAt: spillWindow, maxOpen: maxOpenChunks, pins: &pins{}}
	for i := range l.producers {
		l.producers[i] = &compactBook{w: newWindow(groups, &l.held, &l.dense), groups: groups, highest: make([]uint64, groups), front: make([]uint64, groups), again: newDupSet(), held: &l.held, pins: l.pins}
	}
	return l
}

// SetDeliveryShards is Ledger.SetDeliveryShards. Call it before the run.
func (l *Compact) SetDeliveryShards() {
	l.shardOf, l.byDelivery = nil, true
	for _, b := range l.producers {
		b.w.setShards()
	}
}

// Reserve does nothing: a compact ledger's memory follows the backlog, not the schedule. It is
// here so that a runner can hold either ledger.
func (l *Compact) Reserve(int, uint64) {}

// Kept is how many messages the ledger keeps one by one (the window's hot blocks, the spilled,
// the further deliveries of settled ones, per group): with DenseBytes, what its memory follows.
// It takes no lock.
func (l *Compact) Kept() int64 { return l.held.Load() }

// DenseBytes is the bytes of the backlog kept in the dense form (dense.go). It takes no lock.
func (l *Compact) DenseBytes() int64 { return l.dense.Load() }

// kept counts what Kept and DenseBytes track, under the locks.
func (l *Compact) kept() (n, dense int64) {
	for _, b := range l.producers {
		b.mu.Lock()
		n += int64(b.w.n - b.w.frozen*blockSize + len(b.sp) + b.again.len())
		for _, bl := range b.w.blocks {
			if bl.fz != nil {
				dense += bl.fz.bytes()
			}
		}
		b.mu.Unlock()
	}
	return n, dense
}

// Acked is the number of messages acknowledged so far.
func (l *Compact) Acked() int64 { return l.acked.Load() }

// Received is Ledger.Received.
func (l *Compact) Received() int64 {
	var n int64
	for g := range l.firstDelivered {
		n += l.firstDelivered[g].Load()
	}
	return n
}

// DeliveredUnique is Ledger.DeliveredUnique.
func (l *Compact) DeliveredUnique() int64 {
	least := l.firstDelivered[0].Load()
	for g := 1; g < l.groups; g++ {
		least = min(least, l.firstDelivered[g].Load())
	}
	return least
}

// grow extends the window to hold seq (seq >= w.lo). b.mu is held.
func (b *compactBook) grow(seq uint64) { b.w.grow(int(seq - b.w.lo + 1)) }

// Sent is Ledger.Sent.
func (l *Compact) Sent(producer int, seq uint64, acked bool) { l.SentAt(producer, seq, acked, 0) }

// SentAt is Ledger.SentAt.
func (l *Compact) SentAt(producer int, seq uint64, acked bool, intendedNs int64) {
	b := l.producers[producer]
	b.mu.Lock()
	b.mark(seq, acked, intendedNs, seq+1)
	l.advance(b)
	closable := b.closable()
	b.mu.Unlock()
	if closable {
		l.closeChunks(b)
	}
	if acked {
		l.acked.Add(1)
	}
}

// Batch is Ledger.Batch.
func (l *Compact) Batch(producer int, first uint64, n int) {
	if n <= 0 {
		return
	}
	b := l.producers[producer]
	end := first + uint64(n)
	b.mu.Lock()
	for _, s := range []uint64{first, end} {
		if s < b.w.lo {
			if i, ok := b.spilledAt(s); ok {
				b.sp[i].flags |= flagBatchStart
			}
			continue
		}
		b.grow(s)
		if i := int(s - b.w.lo); b.w.flags(i)&flagBatchStart == 0 {
			b.w.at(i).flags |= flagBatchStart
		}
	}
	b.mu.Unlock()
}

// SentBatch is Ledger.SentBatch.
func (l *Compact) SentBatch(producer int, first uint64, errs []error, intendedNs []int64, next uint64) {
	if len(errs) == 0 {
		return
	}
	b := l.producers[producer]
	var acked int64
	b.mu.Lock()
	for i, err := range errs {
		b.mark(first+uint64(i), err == nil, intendedNs[i], next)
		if err == nil {
			acked++
		}
	}
	l.advance(b)
	closable := b.closable()
	b.mu.Unlock()
	if closable {
		l.closeChunks(b)
	}
	l.acked.Add(acked)
}

// mark records one message's answer, in the window or in its exception. b.mu is held.
func (b *compactBook) mark(seq uint64, acked bool, intendedNs int64, next uint64) {
	f := flagSent | flagFailed
	if acked {
		f = flagSent | flagAcked
	}
	after := uint32(1)
	if next > seq && next-seq <= 1<<32-1 {
		after = uint32(next - seq)
	}
	b.answeredMax = max(b.answeredMax, intendedNs)
	if seq < b.w.lo {
		if i, ok := b.spilledAt(seq); ok {
			e := &b.sp[i]
			e.intended, e.after, e.flags = intendedNs, after, e.flags|f
			if acked {
				for _, d := range b.spD[i*b.groups : (i+1)*b.groups] {
					if d&^foundBit == 0 {
						b.hole(intendedNs) // answered after it spilled
						b.pins.lateHole(intendedNs)
						break
					}
				}
			}
			if b.plainAt(i) {
				b.spPlain++
				b.compactSpilled()
			}
		}
		return // settled plainly: it was answered already
	}
	b.grow(seq)
	e := b.w.at(int(seq - b.w.lo))
	e.intended, e.after, e.flags = intendedNs, after, e.flags|f
}

// Delivered is Ledger.Delivered.
func (l *Compact) Delivered(producer int, seq uint64) bool {
	return l.DeliveredAt(0, 0, producer, seq, 0)
}

// DeliveredTo is Ledger.DeliveredTo.
func (l *Compact) DeliveredTo(group, producer int, seq uint64) bool {
	return l.DeliveredAt(group, 0, producer, seq, 0)
}

// DeliveredOn is Ledger.DeliveredOn.
func (l *Compact) DeliveredOn(group, shard, producer int, seq uint64) bool {
	return l.DeliveredAt(group, shard, producer, seq, 0)
}

// DeliveredAt is DeliveredOn for a delivery carrying its message's intended send time (the
// stamp's): a duplicate of a message that had settled plainly, whose own time the ledger no
// longer keeps, is charged to a fault window by it.
func (l *Compact) DeliveredAt(group, shard, producer int, seq uint64, intendedNs int64) (first bool) {
	if producer < 0 || producer >= len(l.producers) || group < 0 || group >= l.groups {
		l.unknown.Add(1)
		return false
	}
	b := l.producers[producer]
	b.mu.Lock()
	if seq < b.w.lo {
		first = l.deliverBelow(b, group, shard, producer, seq, intendedNs)
	} else {
		b.grow(seq)
		i := int(seq - b.w.lo)
		bl, o := b.w.hot(i)
		bl.d[group][o]++
		first = bl.d[group][o] == 1
		if first {
			b.front[group] = max(b.front[group], seq+1)
		}
		if first && !l.noOrder {
			if l.byDelivery {
				bl.sh[group][o] = uint16(min(max(shard, 0), maxShard) + 1)
			}
			slot := l.slot(b, group, producer, seq, shard)
			if seq+1 < b.highest[slot] && l.brokeOrder(b, group, slot, producer, seq) {
				b.reordered++
			}
			b.highest[slot] = max(b.highest[slot], seq+1)
		}
		if i == 0 || (first && b.spillable(l.spillAt)) {
			l.advance(b)
		}
	}
	b.mu.Unlock()
	if first {
		l.firstDelivered[group].Add(1)
	}
	return first
}

// deliverBelow marks a delivery of a message below the watermark. b.mu is held.
func (l *Compact) deliverBelow(b *compactBook, group, shard, producer int, seq uint64, intendedNs int64) (first bool) {
	i, ok := b.spilledAt(seq)
	if !ok { // settled plainly: delivered once to every group, so this is a duplicate
		k := seq*uint64(l.groups) + uint64(group)
		r, known := b.again.get(k)
		if !known {
			r.intended = intendedNs
			b.held.Add(1)
			if !b.redelivered(seq) {
				b.retired-- // counted from now on as the message it is
			}
		}
		r.extra++
		b.again.set(k, r, !known)
		return false
	}
	d := &b.spD[i*l.groups+group]
	*d++
	first = *d&^foundBit == 1
	if first && !l.noOrder {
		if b.spSh != nil {
			b.spSh[i*l.groups+group] = uint16(min(max(shard, 0), maxShard) + 1)
		}
		slot := l.slot(b, group, producer, seq, shard)
		if seq+1 < b.highest[slot] && l.brokeOrderBelow(b, i, group, slot, producer, seq) {
			b.reordered++
		}
		b.highest[slot] = max(b.highest[slot], seq+1)
	}
	if b.plainAt(i) {
		b.spPlain++
		b.compactSpilled()
	}
	return first
}

// plainAt says whether spilled message i has settled plainly since: acknowledged, delivered once
// to every group (a message spilled while its deliveries were under way). b.mu is held.
func (b *compactBook) plainAt(i int) bool {
	if b.sp[i].flags&flagAcked == 0 {
		return false
	}
	for _, d := range b.spD[i*b.groups : (i+1)*b.groups] {
		if d != 1 { // a found mark is not 1 either
			return false
		}
	}
	return true
}

// compactSpilled moves the spilled messages settled plainly since to the settled count, once
// they are a quarter of the spilled, and keeps the holes to those still undelivered. b.mu is held.
func (b *compactBook) compactSpilled() {
	if b.spPlain < spillBlock || b.spPlain*4 < len(b.sp) {
		return
	}
	g, n := b.groups, 0
	holes := b.holes[:0]
	for i := range b.sp {
		e := b.sp[i]
		if b.plainAt(i) {
			b.retired++
			b.settle(e.intended)
			continue
		}
		b.sp[n] = e
		copy(b.spD[n*g:(n+1)*g], b.spD[i*g:(i+1)*g])
		if b.spSh != nil {
			copy(b.spSh[n*g:(n+1)*g], b.spSh[i*g:(i+1)*g])
		}
		if e.flags&flagAcked != 0 && slices.ContainsFunc(b.spD[n*g:(n+1)*g], func(d uint32) bool { return d&^foundBit == 0 }) {
			holes = append(holes, e.intended)
		}
		n++
	}
	b.held.Add(int64(n - len(b.sp)))
	b.sp, b.spD, b.holes, b.spPlain = b.sp[:n], b.spD[:n*g], holes, 0
	if b.spSh != nil {
		b.spSh = b.spSh[:n*g]
	}
}

// redelivered says whether a plainly settled message was delivered again to any group. b.mu is
// held.
func (b *compactBook) redelivered(seq uint64) bool {
	for g := range uint64(b.groups) {
		if _, ok := b.again.get(seq*uint64(b.groups) + g); ok {
			return true
		}
	}
	return false
}

// spilledAt finds seq among the spilled messages. b.mu is held.
func (b *compactBook) spilledAt(seq uint64) (int, bool) {
	return slices.BinarySearchFunc(b.sp, seq, func(e spilled, s uint64) int { return cmp.Compare(e.seq, s) })
}

// settled says whether window message i is answered and, if acknowledged, delivered to every
// group: nothing left to wait for. plain: acknowledged and delivered exactly once everywhere.
func (b *compactBook) settled(i int) (settled, plain bool) {
	f := b.w.flags(i)
	if f&flagAcked == 0 {
		return f&flagFailed != 0, false
	}
	plain = true
	for g := range b.groups {
		switch b.w.count(g, i) {
		case 0:
			return false, false
		case 1:
		default:
			plain = false
		}
	}
	return true, plain
}

// advance moves the watermark over every settled message at the head of the window, and spills
// a sparse head when the window is long. b.mu is held.
func (l *Compact) advance(b *compactBook) {
	for {
		k := 0
		for k < b.w.n {
			ok, _ := b.settled(k)
			if !ok {
				break
			}
			k++
		}
		if k == 0 && b.spillable(l.spillAt) {
			k = 1
		}
		if k == 0 {
			return
		}
		l.retire(b, k)
	}
}

// spillable says whether the window's head is more than spillAt behind every group's delivery
// frontier: unresolved so long after what followed it, it is a hole, not a backlog. b.mu is held.
func (b *compactBook) spillable(spillAt int) bool {
	if b.w.n == 0 {
		return false
	}
	front := b.front[0]
	for _, f := range b.front[1:] {
		front = min(front, f)
	}
	return front > b.w.lo+uint64(spillAt)
}

// retire moves the first k window messages below the watermark. b.mu is held.
func (l *Compact) retire(b *compactBook, k int) {
	var plainly int64
	defer func() { b.held.Add(-plainly) }()
	for i := range k {
		seq := b.w.lo + uint64(i)
		w := *b.w.at(i)
		b.leftMax = max(b.leftMax, w.intended)
		if _, plain := b.settled(i); plain {
			plainly++
			b.retired++
			b.settle(w.intended)
			continue
		}
		undelivered := false
		e := spilled{seq: seq, intended: w.intended, after: w.after, flags: w.flags}
		for g := range b.groups {
			d := b.w.count(g, i)
			undelivered = undelivered || d == 0
			if b.isFoundIn(g, seq) {
				d |= foundBit
			}
			b.spD = append(b.spD, d)
		}
		if undelivered && w.flags&flagAcked != 0 {
			b.holes = append(b.holes, w.intended) // in order: they leave in sequence order
		}
		if b.w.shards {
			for g := range b.groups {
				b.spSh = append(b.spSh, b.w.shard(g, i))
			}
		}
		for j := i + 1; j < b.w.n && j <= i+maxBatchScan; j++ {
			if b.w.flags(j)&flagBatchStart != 0 {
				e.batchEnd = uint16(j - i)
				break
			}
		}
		b.sp = append(b.sp, e)
	}
	b.w.drop(k)
}

// Found is Ledger.Found.
func (l *Compact) Found(group, producer int, seq uint64) {
	if producer < 0 || producer >= len(l.producers) || group < 0 || group >= l.groups {
		return
	}
	b := l.producers[producer]
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq < b.w.lo {
		if i, ok := b.spilledAt(seq); ok {
			b.spD[i*l.groups+group] |= foundBit
		}
		return // settled plainly: delivered, so found changes nothing
	}
	if seq-b.w.lo >= uint64(b.w.n) {
		return // never sent
	}
	if b.found == nil {
		b.found, b.foundBase = make([][]uint64, l.groups), b.w.lo
	}
	i := seq - b.foundBase
	if w := int(i/64) + 1; len(b.found[group]) < w {
		b.found[group] = append(b.found[group], make([]uint64, w-len(b.found[group]))...)
	}
	b.found[group][i/64] |= 1 << (i % 64)
}

// isFoundIn reports whether window message seq was found for group. b.mu is held.
func (b *compactBook) isFoundIn(group int, seq uint64) bool {
	if b.found == nil || seq < b.foundBase {
		return false
	}
	i := seq - b.foundBase
	return i/64 < uint64(len(b.found[group])) && b.found[group][i/64]&(1<<(i%64)) != 0
}

// each calls fn for every message the book still keeps one by one (spilled, redelivered and in
// the window), in sequence order, with its marks. b.mu is held.
func (b *compactBook) each(fn func(seq uint64, f uint8, intended int64, d func(g int) int64, found func(g int) bool)) {
	groups := uint64(b.groups)
	never := func(int) bool { return false }
	i := 0
	spilledBefore := func(seq uint64) { // the spilled messages before seq, in order
		for ; i < len(b.sp) && b.sp[i].seq < seq; i++ {
			e, marks := b.sp[i], b.spD[i*int(groups):(i+1)*int(groups)]
			fn(e.seq, e.flags, e.intended, func(g int) int64 { return int64(marks[g] &^ foundBit) }, func(g int) bool { return marks[g]&foundBit != 0 })
		}
	}
	// The duplicated messages, each once with every group's extra deliveries, among them.
	extra := make([]uint32, groups)
	cur, have := uint64(0), false
	var intended int64
	emit := func() {
		if !have {
			return
		}
		spilledBefore(cur)
		x := slices.Clone(extra)
		fn(cur, flagSent|flagAcked, intended, func(g int) int64 { return 1 + int64(x[g]) }, never)
		clear(extra)
	}
	b.again.each(func(k uint64, r redelivered) {
		if seq := k / groups; !have || seq != cur {
			emit()
			cur, have = seq, true
		}
		extra[k%groups], intended = r.extra, r.intended
	})
	emit()
	spilledBefore(^uint64(0))
	b.w.scan(func(i int, bl *block, o int) {
		s := b.w.lo + uint64(i)
		fn(s, bl.ent[o].flags, bl.ent[o].intended, func(g int) int64 { return int64(bl.d[g][o]) }, func(g int) bool { return b.isFoundIn(g, s) })
	})
}

// Close is Ledger.Close.
func (l *Compact) Close(maxLost int) (Totals, []LostMessage) {
	var t Totals
	var lost []LostMessage
	for p, b := range l.producers {
		b.mu.Lock()
		t.Sent += b.retired
		t.Acked += b.retired
		t.Delivered += b.retired * int64(l.groups)
		t.Deliveries += b.retired * int64(l.groups)
		b.each(func(seq uint64, f uint8, _ int64, d func(int) int64, found func(int) bool) {
			if f&flagSent != 0 {
				t.Sent++
			}
			if f&flagAcked != 0 {
				t.Acked++
			}
			if f&flagFailed != 0 {
				t.Failed++
			}
			for g := range l.groups {
				if account(&t, f, d(g), found(g), l.Poison(seq), false) && len(lost) < maxLost {
					lost = append(lost, LostMessage{Group: g, Producer: p, Seq: seq})
				}
			}
		})
		t.Reordered += b.reordered
		b.mu.Unlock()
	}
	t.Unknown = l.unknown.Load()
	t.Foreign = l.foreign.Load()
	return t, lost
}

// Attribute is Ledger.Attribute (see Compact for the last durable point).
func (l *Compact) Attribute(windows []Window) []WindowTotals {
	out := make([]WindowTotals, len(windows))
	if len(windows) == 0 {
		return out
	}
	for i := range out {
		out[i].OldestLostNs, out[i].LastDurableNs = -1, -1
	}
	for _, b := range l.producers {
		b.mu.Lock()
		b.each(func(seq uint64, f uint8, intended int64, d func(int) int64, found func(int) bool) {
			var lost, dups int64
			for g := range l.groups {
				n := d(g)
				if f&flagAcked != 0 && n == 0 && !found(g) {
					lost++
				}
				if n > 1 && !l.Poison(seq) {
					dups += n - 1
				}
			}
			if lost == 0 && dups == 0 {
				return
			}
			if i := Charge(windows, intended); i >= 0 {
				out[i].Lost += lost
				out[i].Duplicates += dups
				if lost > 0 && (out[i].OldestLostNs < 0 || intended < out[i].OldestLostNs) {
					out[i].OldestLostNs = intended
				}
			}
		})
		b.mu.Unlock()
	}
	// The newest acknowledged message kept one by one and not lost, before each oldest loss: a
	// second pass, rather than a list of their times (a backlog's may be hundreds of millions).
	if slices.ContainsFunc(out, func(w WindowTotals) bool { return w.OldestLostNs >= 0 }) {
		for _, b := range l.producers {
			b.mu.Lock()
			b.each(func(_ uint64, f uint8, intended int64, d func(int) int64, found func(int) bool) {
				if f&flagAcked == 0 {
					return
				}
				for g := range l.groups {
					if d(g) == 0 && !found(g) {
						return // lost
					}
				}
				for i := range out {
					if x := out[i].OldestLostNs; x >= 0 && intended < x && intended > out[i].LastDurableNs {
						out[i].LastDurableNs = intended
					}
				}
			})
			b.mu.Unlock()
		}
	}
	for i := range out {
		x := out[i].OldestLostNs
		if x < 0 {
			continue
		}
		pinned, late := l.pins.at(x)
		out[i].LastDurableNs = max(out[i].LastDurableNs, pinned)
		for _, b := range l.producers {
			b.mu.Lock()
			out[i].LastDurableNs = max(out[i].LastDurableNs, b.durableBefore(x, late))
			b.mu.Unlock()
		}
	}
	return out
}
