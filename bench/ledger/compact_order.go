package ledger

// The compact ledger's order rule: Ledger's (brokeOrder), over the window, the spilled messages
// and the plainly settled ones (delivered once to every group, their batch marks and shards not
// kept).

// slot is Ledger.slot.
func (l *Compact) slot(b *compactBook, group, producer int, seq uint64, shard int) int {
	return l.slotIn(&b.highest, l.groups, group, producer, seq, shard)
}

// shardMark is 1 + the shard a delivery of s to group named, 0 before one or when unknown (a
// plainly settled message). b.mu is held.
func (b *compactBook) shardMark(group int, s uint64) uint16 {
	if s >= b.w.lo {
		if i := s - b.w.lo; i < uint64(b.w.n) {
			return b.w.shard(group, int(i))
		}
		return 0
	}
	if i, ok := b.spilledAt(s); ok && b.spSh != nil {
		return b.spSh[i*b.groups+group]
	}
	return 0
}

// delivered reports whether s reached group (a plainly settled message did). b.mu is held.
func (b *compactBook) delivered(group int, s uint64) bool {
	if s >= b.w.lo {
		i := s - b.w.lo
		return i < uint64(b.w.n) && b.w.count(group, int(i)) > 0
	}
	if i, ok := b.spilledAt(s); ok {
		return b.spD[i*b.groups+group]&^foundBit > 0
	}
	return true
}

// same is Ledger.sameShard's test for s against seq (whose shard mark is k). A plainly settled
// message's shard is not kept: it counts as on seq's shard. b.mu is held.
func (l *Compact) same(b *compactBook, group, producer int, seq uint64, k uint16, s uint64) bool {
	switch {
	case l.byDelivery:
		m := b.shardMark(group, s)
		if s < b.w.lo {
			if _, ok := b.spilledAt(s); !ok {
				return true
			}
		}
		return m == k
	case l.shardOf != nil:
		return l.shardOf(producer, s) == l.shardOf(producer, seq)
	}
	return true
}

// brokeOrder is Ledger's rule for a message in the window (every later message is in it too).
// b.mu is held.
func (l *Compact) brokeOrder(b *compactBook, group, slot, producer int, seq uint64) bool {
	hi := b.highest[slot]
	i := int(seq - b.w.lo)
	bl, o := b.w.hot(i)
	if a := bl.ent[o].after; a != 0 && hi > seq+uint64(a) {
		return true
	}
	var k uint16
	if l.byDelivery {
		k = bl.sh[group][o]
	}
	for s := seq + 1; s < hi && s <= seq+maxBatchScan; s++ {
		j := int(s - b.w.lo)
		if j >= b.w.n {
			break
		}
		if b.w.flags(j)&flagBatchStart != 0 {
			return false
		}
		if b.w.count(group, j) > 0 && l.same(b, group, producer, seq, k, s) {
			return true
		}
	}
	return false
}

// brokeOrderBelow is the rule for a first delivery of an exception: its batch ends where the
// window said when it left. b.mu is held.
func (l *Compact) brokeOrderBelow(b *compactBook, i, group, slot, producer int, seq uint64) bool {
	hi := b.highest[slot]
	e := b.sp[i]
	if e.after != 0 && hi > seq+uint64(e.after) {
		return true
	}
	var k uint16
	if b.spSh != nil {
		k = b.spSh[i*l.groups+group]
	}
	end := seq + maxBatchScan
	if e.batchEnd != 0 {
		end = seq + uint64(e.batchEnd) - 1
	}
	for s := seq + 1; s < hi && s <= end; s++ {
		if s >= b.w.lo {
			if j := s - b.w.lo; j < uint64(b.w.n) && b.w.flags(int(j))&flagBatchStart != 0 {
				return false
			}
		} else if x, ok := b.spilledAt(s); ok && b.sp[x].flags&flagBatchStart != 0 {
			return false
		}
		if b.delivered(group, s) && l.same(b, group, producer, seq, k, s) {
			return true
		}
	}
	return false
}
