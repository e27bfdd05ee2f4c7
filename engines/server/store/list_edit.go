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
	l.c.hist |= histEdit
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

// locate finds element i (0 <= i < n): its chunk, its index k there and its bytes [s, e),
// walking from the nearer end of the list and of the chunk.
func (l *List) locate(i int) (ci, k, s, e int) {
	if i < l.n/2 {
		base := 0
		for ci = 0; i >= base+int(l.c.at(ci).n); ci++ {
			base += int(l.c.at(ci).n)
		}
		k = i - base
	} else {
		top := l.n
		for ci = l.c.k - 1; ; ci-- {
			top -= int(l.c.at(ci).n)
			if i >= top {
				break
			}
		}
		k = i - top
	}
	ch := l.c.at(ci)
	buf := ch.buf()
	if k < int(ch.n)/2 {
		e = int(ch.lo)
		for j := 0; j <= k; j++ {
			s = e
			_, e = elemAt(buf, s)
		}
		return ci, k, s, e
	}
	s = int(ch.hi)
	for j := int(ch.n) - 1; j >= k; j-- {
		e = s
		_, s = elemBefore(buf, e)
	}
	return ci, k, s, e
}

// SetIndex replaces element i (already normalised, in range) in place (LSET).
func (l *List) SetIndex(i int, v []byte) {
	l.c.hist |= histEdit
	ci, k, s, e := l.locate(i)
	l.splice(ci, s, e, v, 0, int(l.c.at(ci).n)-k-1)
}

// Insert puts v before (or after) the first element equal to pivot, in place (LINSERT); it
// returns the new length, or -1 when pivot is not in the list.
func (l *List) Insert(pivot, v []byte, after bool) int {
	for ci := 0; l.c != nil && ci < l.c.k; ci++ {
		ch := l.c.at(ci)
		buf := ch.buf()
		for off, k := int(ch.lo), 0; off < int(ch.hi); k++ {
			e, next := elemAt(buf, off)
			if bytes.Equal(e, pivot) {
				if after {
					l.splice(ci, next, next, v, 1, int(ch.n)-k-1)
				} else {
					l.splice(ci, off, off, v, 1, int(ch.n)-k)
				}
				l.n++
				l.c.hist |= histEdit
				return l.n
			}
			off = next
		}
	}
	return -1
}

// splice replaces the bytes [s, e) of chunk ci (one element, or none for an insertion) with
// v's encoding; dn is the change in the chunk's element count and tn the number of elements
// after e. The chunk's other bytes move within its block, the shorter side first; when the
// block has no room the chunk is split after s, the new element and the bytes after it going
// into a new chunk (or two, if they do not fit one block).
func (l *List) splice(ci, s, e int, v []byte, dn, tn int) {
	ch := l.c.at(ci)
	need := encLen(len(v))
	d := need - (e - s)
	lo, hi, size := int(ch.lo), int(ch.hi), int(ch.size)
	buf := ch.buf()
	// A heap chunk is one big element's own block: an element that fits a pooled block goes to one.
	ownBlock := !ch.pooled && ch.n == 1 && need <= listBlock
	if d <= lo+size-hi && !ownBlock {
		if d < 0 { // shrink: close the surplus from the shorter side
			if s-lo < hi-e {
				copy(buf[lo-d:], buf[lo:s])
				lo, s = lo-d, s-d
			} else {
				copy(buf[e+d:], buf[e:hi])
				hi += d
			}
		} else if d > 0 { // grow: the prefix moves x towards the head, the suffix d-x the other way
			var x int
			switch {
			case lo >= d && (s-lo <= hi-e || size-hi < d):
				x = d
			case size-hi >= d:
				x = 0
			default:
				x = lo
			}
			copy(buf[lo-x:], buf[lo:s])
			copy(buf[e+d-x:], buf[e:hi])
			lo, s, hi = lo-x, s-x, hi+d-x
		}
		putElem(buf[s:], v)
		ch.lo, ch.hi = int32(lo), int32(hi)
		ch.n += int32(dn)
		return
	}
	tail := buf[e:hi]
	var add []*lchunk
	if need+len(tail) <= listBlock {
		nc := newChunk(need+len(tail), false)
		putElem(nc.buf(), v)
		copy(nc.buf()[need:], tail)
		nc.hi, nc.n = int32(need+len(tail)), int32(1+tn)
		add = append(add, nc)
	} else {
		nc := newChunk(need, false)
		putElem(nc.buf(), v)
		nc.hi, nc.n = int32(need), 1
		add = append(add, nc)
		if len(tail) > 0 {
			tc := newChunk(len(tail), false)
			copy(tc.buf(), tail)
			tc.hi, tc.n = int32(len(tail)), int32(tn)
			add = append(add, tc)
		}
	}
	// The chunk keeps its elements before s: it had n, loses the tn after e and (dn == 0) the
	// one replaced.
	ch.n -= int32(tn + 1 - dn)
	ch.hi = int32(s)
	for j, nc := range add {
		l.c.insertAt(ci+1+j, nc)
	}
	if ch.n == 0 {
		releaseChunk(l.c.removeAt(ci))
	}
}

// Trim keeps elements start..stop (LTRIM's rules), dropping whole chunks from both ends and
// cutting into the end chunks in place, as Redis's quicklistDelRange does.
func (l *List) Trim(start, stop int) {
	s, e, ok := normRange(start, stop, l.n)
	if !ok {
		l.Replace(nil)
		return
	}
	l.c.hist |= histEdit
	l.dropRight(l.n - 1 - e)
	l.dropLeft(s)
}

func (l *List) dropLeft(k int) {
	for k > 0 {
		ch := l.c.at(0)
		if int(ch.n) <= k {
			k -= int(ch.n)
			l.n -= int(ch.n)
			releaseChunk(l.c.popFront())
			continue
		}
		off := int(ch.lo)
		for range k {
			_, off = elemAt(ch.buf(), off)
		}
		ch.lo = int32(off)
		ch.n -= int32(k)
		l.n -= k
		return
	}
}

func (l *List) dropRight(k int) {
	for k > 0 {
		ch := l.c.at(l.c.k - 1)
		if int(ch.n) <= k {
			k -= int(ch.n)
			l.n -= int(ch.n)
			releaseChunk(l.c.popBack())
			continue
		}
		off := int(ch.hi)
		for range k {
			_, off = elemBefore(ch.buf(), off)
		}
		ch.hi = int32(off)
		ch.n -= int32(k)
		l.n -= k
		return
	}
}
