package store

import "bytes"

// In-place edits of a List's middle (LREM, LSET, LINSERT): only the chunk holding the element
// is rewritten, its bytes shifting within its block, so an edit costs at most a block's copy
// and no allocation, where rebuilding the list cost O(n) of both (Redis edits its quicklist
// node in place the same way).

// Remove deletes elements equal to v: with count > 0 the first count from the head, count < 0
// the first -count from the tail, count 0 all of them (LREM's rules). It returns how many it
// removed. The walk stops at the last match wanted, so the reliable-list ack (LREM -1 of the
// oldest message, at the tail) touches only the tail chunk. A chunk left empty goes back to the
// pool; one that fits with a neighbour in 3/4 of a block is merged with it, so removals do not
// leave a list of near-empty blocks.
func (l *List) Remove(v []byte, count int) int {
	if l.n == 0 {
		return 0
	}
	want := count
	if want < 0 {
		want = -want
	}
	if want == 0 {
		want = l.n
	}
	removed := 0
	if count >= 0 {
		for ci := 0; ci < l.c.k && removed < want; {
			ch := l.c.at(ci)
			r := ch.removeFwd(v, want-removed)
			if r == 0 {
				ci++
				continue
			}
			removed += r
			l.n -= r
			if ch.n == 0 {
				releaseChunk(l.c.removeAt(ci))
				continue
			}
			// Walk the merged chunk again: the part already walked has no match left.
			ci = l.c.mergeAround(ci)
		}
		return removed
	}
	for ci := l.c.k - 1; ci >= 0 && removed < want; {
		ch := l.c.at(ci)
		r := ch.removeBack(v, want-removed)
		if r == 0 {
			ci--
			continue
		}
		removed += r
		l.n -= r
		if ch.n == 0 {
			releaseChunk(l.c.removeAt(ci))
			ci--
			continue
		}
		ci = l.c.mergeAround(ci)
	}
	return removed
}

// removeFwd deletes up to want elements equal to v walking from the chunk's head: kept
// elements after the first match shift up over the matches, then the shorter side closes the gap.
func (ch *lchunk) removeFwd(v []byte, want int) int {
	buf := ch.buf()
	w, r := -1, 0 // w: where the next kept element goes, once a match has been found
	off, hi := int(ch.lo), int(ch.hi)
	for off < hi && r < want {
		e, next := elemAt(buf, off)
		if bytes.Equal(e, v) {
			if w < 0 {
				w = off
			}
			r++
		} else if w >= 0 {
			w += copy(buf[w:], buf[off:next])
		}
		off = next
	}
	if r == 0 {
		return 0
	}
	ch.closeGap(w, off)
	ch.n -= int32(r)
	return r
}

// closeGap removes the bytes [s, e) of the chunk's used bytes, moving the shorter side.
func (ch *lchunk) closeGap(s, e int) {
	buf := ch.buf()
	lo, hi := int(ch.lo), int(ch.hi)
	if s-lo < hi-e {
		copy(buf[lo+e-s:], buf[lo:s])
		ch.lo = int32(lo + e - s)
	} else {
		copy(buf[s:], buf[e:hi])
		ch.hi = int32(hi - (e - s))
	}
}

// removeBack is removeFwd from the chunk's tail.
func (ch *lchunk) removeBack(v []byte, want int) int {
	buf := ch.buf()
	w, r := -1, 0 // w: where the next kept element ends, once a match has been found
	lo, off := int(ch.lo), int(ch.hi)
	for off > lo && r < want {
		e, start := elemBefore(buf, off)
		if bytes.Equal(e, v) {
			if w < 0 {
				w = off
			}
			r++
		} else if w >= 0 {
			w -= off - start
			copy(buf[w:], buf[start:off])
		}
		off = start
	}
	if r == 0 {
		return 0
	}
	ch.closeGap(off, w)
	ch.n -= int32(r)
	return r
}

// removeAt takes chunk i out of the ring, shifting the shorter side.
func (c *listChunks) removeAt(i int) *lchunk {
	n := len(c.ring)
	ch := c.at(i)
	if i < c.k/2 {
		for j := i; j > 0; j-- {
			c.ring[(c.head+j)%n] = c.ring[(c.head+j-1)%n]
		}
		c.ring[c.head] = nil
		c.head = (c.head + 1) % n
	} else {
		for j := i; j < c.k-1; j++ {
			c.ring[(c.head+j)%n] = c.ring[(c.head+j+1)%n]
		}
		c.ring[(c.head+c.k-1)%n] = nil
	}
	c.k--
	return ch
}

// insertAt puts ch into the ring at position i (0..k), shifting the shorter side.
func (c *listChunks) insertAt(i int, ch *lchunk) {
	if c.k == len(c.ring) {
		c.grow()
	}
	n := len(c.ring)
	if i < c.k/2 {
		c.head = (c.head - 1 + n) % n
		for j := 0; j < i; j++ {
			c.ring[(c.head+j)%n] = c.ring[(c.head+j+1)%n]
		}
	} else {
		for j := c.k; j > i; j-- {
			c.ring[(c.head+j)%n] = c.ring[(c.head+j-1)%n]
		}
	}
	c.ring[(c.head+i)%n] = ch
	c.k++
}

func (ch *lchunk) used() int { return int(ch.hi - ch.lo) }

// mergeMax is the most a merged chunk holds: a quarter of the block stays free, so a push after
// a merge does not need a new chunk at once (merging up to a full block made the reliable-list
// ack, RPUSH then LREM -1 at the tail, copy a block and allocate a chunk every time).
const mergeMax = listBlock * 3 / 4

// mergeAround merges pooled chunk i with a pooled neighbour when both fit in mergeMax, and
// returns the index of the chunk now holding chunk i's elements.
func (c *listChunks) mergeAround(i int) int {
	ch := c.at(i)
	if !ch.pooled {
		return i
	}
	if i > 0 {
		if p := c.at(i - 1); p.pooled && p.used()+ch.used() <= mergeMax {
			c.merge(i - 1)
			return i - 1
		}
	}
	if i+1 < c.k {
		if nx := c.at(i + 1); nx.pooled && ch.used()+nx.used() <= mergeMax {
			c.merge(i)
		}
	}
	return i
}

// merge joins pooled chunks i and i+1 (their bytes fit one block) into one, copying the smaller
// share when one block has room for the other's bytes, else moving both into chunk i's block:
// to its end if it is the head chunk (room for LPUSH), to its start otherwise (for RPUSH).
func (c *listChunks) merge(i int) {
	a, b := c.at(i), c.at(i+1)
	ua, ub := a.used(), b.used()
	ab, bb := a.buf(), b.buf()
	switch {
	case int(b.lo) >= ua && (ua <= ub || int(a.size-a.hi) < ub):
		copy(bb[int(b.lo)-ua:], ab[a.lo:a.hi])
		b.lo -= int32(ua)
		b.n += a.n
		releaseChunk(c.removeAt(i))
		return
	case int(a.size-a.hi) >= ub:
		copy(ab[a.hi:], bb[b.lo:b.hi])
		a.hi += int32(ub)
	case i == 0:
		lo := int(a.size) - ua - ub
		copy(ab[lo:], ab[a.lo:a.hi])
		copy(ab[lo+ua:], bb[b.lo:b.hi])
		a.lo, a.hi = int32(lo), a.size
	default:
		copy(ab, ab[a.lo:a.hi])
		copy(ab[ua:], bb[b.lo:b.hi])
		a.lo, a.hi = 0, int32(ua+ub)
	}
	a.n += b.n
	releaseChunk(c.removeAt(i + 1))
}
