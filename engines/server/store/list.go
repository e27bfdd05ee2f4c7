package store

import (
	"encoding/binary"
	"runtime"
	"sync"
	"unsafe"
)

// A List is a quicklist-like deque of chunks. Each chunk is one byte block holding consecutive
// elements, each encoded as uvarint(len), the bytes, then len again as a reversed uvarint so the
// chunk can be walked from either end; a chunk grows towards both ends, so pushes at the head
// and at the tail cost no copying. Blocks come from a shared pool of fixed-size blocks in
// mmap'd slabs outside the Go heap (no per-element objects, no GC headroom); an element larger
// than a block gets a chunk of its own on the heap.
//
// Elements returned by Pop, Index, Range and Each are copies, or (Each) valid only during the
// callback: block memory is reused once its chunk empties.

const (
	listBlock = 8 << 10
	listSlab  = 1 << 20
)

// lchunk is 32 bytes (the size class it fills): a list of small elements has one per 8 KB
// block, and a slice header and three ints made it 64, which with the ring's pointer was most
// of a 1 M list's Go heap. A chunk's block is at most an element's size, which RESP caps far
// below 2 GB, so int32 offsets do.
type lchunk struct {
	p      *byte // the block: off the heap (pooled) or a heap slice's array
	size   int32
	lo, hi int32 // used bytes are buf()[lo:hi]
	n      int32
	pooled bool
}

func (ch *lchunk) buf() []byte { return unsafe.Slice(ch.p, ch.size) }

func (ch *lchunk) setBuf(b []byte, pooled bool) {
	ch.p, ch.size, ch.pooled = unsafe.SliceData(b), int32(len(b)), pooled
}

// blockPool hands out listBlock-sized blocks: freed ones first (they are resident), else the
// next block of the current slab, faulted in a step ahead (see prefault). Slabs stay mapped.
type blockPool struct {
	mu   sync.Mutex
	free [][]byte
	slab chunk // the slab being carved; off is the next fresh block
}

var listBlocks = &blockPool{}

func (p *blockPool) get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	s := &p.slab
	if s.off+listBlock > len(s.mem) {
		mem, err := mapChunk(listSlab)
		if err != nil {
			return nil
		}
		arenaMapped.Add(listSlab)
		*s = chunk{mem: mem}
	}
	s.ready = prefault(s.mem, s.ready, s.off+listBlock)
	b := s.mem[s.off : s.off+listBlock : s.off+listBlock]
	s.off += listBlock
	return b
}

func (p *blockPool) put(bs ...[]byte) {
	p.mu.Lock()
	p.free = append(p.free, bs...)
	p.mu.Unlock()
}

// listChunks is the list's chunk deque (a ring), separate from List so a runtime cleanup can
// return the blocks of a dropped list.
type listChunks struct {
	ring     []*lchunk
	head     int
	k        int
	hist     uint8   // the kinds of change the list has had (hist* bits, list_nodes.go)
	restored []qnode // the quicklist nodes it was RESTOREd with, while hist is 0
}

// List is a Redis list.
type List struct {
	c    *listChunks
	n    int
	fill int32 // its quicklist fill (list-max-listpack-size, normFill); 0: the default, -2
}

func (l *List) init() {
	if l.c == nil {
		l.c = &listChunks{}
		runtime.AddCleanup(l, func(c *listChunks) { c.freeAll() }, l.c)
	}
}

func (c *listChunks) freeAll() {
	var bs [][]byte
	for i := 0; i < c.k; i++ {
		ch := c.at(i)
		if ch.pooled {
			bs = append(bs, ch.buf())
		}
		ch.p = nil
	}
	if len(bs) > 0 {
		listBlocks.put(bs...)
	}
	c.ring, c.k = nil, 0
	c.restored = nil
}

func (c *listChunks) at(i int) *lchunk { return c.ring[(c.head+i)%len(c.ring)] }

func (c *listChunks) grow() {
	nr := make([]*lchunk, max(8, 2*len(c.ring)))
	for i := 0; i < c.k; i++ {
		nr[i] = c.at(i)
	}
	c.ring, c.head = nr, 0
}

func (c *listChunks) pushFront(ch *lchunk) {
	if c.k == len(c.ring) {
		c.grow()
	}
	c.head = (c.head - 1 + len(c.ring)) % len(c.ring)
	c.ring[c.head] = ch
	c.k++
}

func (c *listChunks) pushBack(ch *lchunk) {
	if c.k == len(c.ring) {
		c.grow()
	}
	c.ring[(c.head+c.k)%len(c.ring)] = ch
	c.k++
}

func (c *listChunks) popFront() *lchunk {
	ch := c.ring[c.head]
	c.ring[c.head] = nil
	c.head = (c.head + 1) % len(c.ring)
	c.k--
	return ch
}

func (c *listChunks) popBack() *lchunk {
	i := (c.head + c.k - 1) % len(c.ring)
	ch := c.ring[i]
	c.ring[i] = nil
	c.k--
	return ch
}

func releaseChunk(ch *lchunk) {
	if ch.pooled {
		listBlocks.put(ch.buf())
	}
	ch.p = nil
}

// encLen is the encoded size of an element of length n.
func encLen(n int) int { return 2*uvarintLen(uint64(n)) + n }

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// putElem writes v's encoding at b[0:encLen(len(v))].
func putElem(b, v []byte) {
	k := binary.PutUvarint(b, uint64(len(v)))
	copy(b[k:], v)
	var tmp [binary.MaxVarintLen64]byte
	m := binary.PutUvarint(tmp[:], uint64(len(v)))
	p := k + len(v)
	for i := 0; i < m; i++ { // reversed, so it reads as a uvarint going backwards
		b[p+i] = tmp[m-1-i]
	}
}

// elemAt decodes the element starting at off; it returns the value and the next offset.
func elemAt(b []byte, off int) ([]byte, int) {
	n, k := binary.Uvarint(b[off:])
	s := off + k
	e := s + int(n)
	return b[s:e], e + k
}

// elemBefore decodes the element ending at end; it returns the value and its start offset.
func elemBefore(b []byte, end int) ([]byte, int) {
	var n uint64
	var shift uint
	p := end - 1
	for {
		x := b[p]
		n |= uint64(x&0x7f) << shift
		if x < 0x80 {
			break
		}
		shift += 7
		p--
	}
	k := end - p
	e := p
	s := e - int(n)
	return b[s:e], s - k
}

func newChunk(need int, atFront bool) *lchunk {
	ch := &lchunk{}
	if need <= listBlock {
		if b := listBlocks.get(); b != nil {
			ch.setBuf(b, true)
		}
	}
	if ch.p == nil {
		ch.setBuf(make([]byte, max(need, listBlock)), false)
	}
	if atFront {
		ch.lo, ch.hi = ch.size, ch.size
	}
	return ch
}

// Len is the number of elements.
func (l *List) Len() int { return l.n }

// PushLeft inserts a copy of v at the head.
func (l *List) PushLeft(v []byte) {
	l.init()
	l.c.hist |= histPushLeft
	need := encLen(len(v))
	var ch *lchunk
	if l.c.k > 0 {
		ch = l.c.at(0)
		if int(ch.lo) < need {
			ch = nil
		}
	}
	if ch == nil {
		ch = newChunk(need, true)
		l.c.pushFront(ch)
	}
	ch.lo -= int32(need)
	putElem(ch.buf()[ch.lo:], v)
	ch.n++
	l.n++
}

// PushRight inserts a copy of v at the tail.
func (l *List) PushRight(v []byte) {
	l.init()
	l.c.hist |= histPushRight
	need := encLen(len(v))
	var ch *lchunk
	if l.c.k > 0 {
		ch = l.c.at(l.c.k - 1)
		if int(ch.size-ch.hi) < need {
			ch = nil
		}
	}
	if ch == nil {
		ch = newChunk(need, false)
		l.c.pushBack(ch)
	}
	putElem(ch.buf()[ch.hi:], v)
	ch.hi += int32(need)
	ch.n++
	l.n++
}

// PopLeft removes and returns (a copy of) the head; nil when empty.
func (l *List) PopLeft() []byte {
	out, ok := l.AppendPopLeft([]byte{})
	if !ok {
		return nil
	}
	return out
}

// AppendPopLeft removes the head and appends it to dst (a reply buffer the caller reuses, so a
// pop allocates nothing); ok is false when the list is empty.
func (l *List) AppendPopLeft(dst []byte) (out []byte, ok bool) {
	if l.n == 0 {
		return dst, false
	}
	l.c.hist |= histPopLeft
	ch := l.c.at(0)
	v, next := elemAt(ch.buf(), int(ch.lo))
	dst = append(dst, v...)
	ch.lo = int32(next)
	ch.n--
	l.n--
	if ch.n == 0 {
		releaseChunk(l.c.popFront())
	}
	return dst, true
}

// PopRight removes and returns (a copy of) the tail; nil when empty.
func (l *List) PopRight() []byte {
	out, ok := l.AppendPopRight([]byte{})
	if !ok {
		return nil
	}
	return out
}

// AppendPopRight is AppendPopLeft at the tail.
func (l *List) AppendPopRight(dst []byte) (out []byte, ok bool) {
	if l.n == 0 {
		return dst, false
	}
	l.c.hist |= histPopRight
	ch := l.c.at(l.c.k - 1)
	v, start := elemBefore(ch.buf(), int(ch.hi))
	dst = append(dst, v...)
	ch.hi = int32(start)
	ch.n--
	l.n--
	if ch.n == 0 {
		releaseChunk(l.c.popBack())
	}
	return dst, true
}

// Each calls fn with each element from index from, forwards or (reverse) backwards, until fn
// returns false. e is valid only during the call.
func (l *List) Each(from int, reverse bool, fn func(i int, e []byte) bool) {
	if l.n == 0 || from < 0 || from >= l.n {
		return
	}
	if !reverse {
		base := 0
		for ci := 0; ci < l.c.k; ci++ {
			ch := l.c.at(ci)
			if base+int(ch.n) <= from {
				base += int(ch.n)
				continue
			}
			buf := ch.buf()
			for off, i := int(ch.lo), base; off < int(ch.hi); i++ {
				var v []byte
				v, off = elemAt(buf, off)
				if i < from {
					continue
				}
				if !fn(i, v) {
					return
				}
			}
			base += int(ch.n)
		}
		return
	}
	top := l.n
	for ci := l.c.k - 1; ci >= 0; ci-- {
		ch := l.c.at(ci)
		if top-int(ch.n) > from {
			top -= int(ch.n)
			continue
		}
		buf := ch.buf()
		for end, i := int(ch.hi), top-1; end > int(ch.lo); i-- {
			var v []byte
			v, end = elemBefore(buf, end)
			if i > from {
				continue
			}
			if !fn(i, v) {
				return
			}
		}
		top -= int(ch.n)
	}
}

// Index returns (a copy of) element i (0-based from the head; negative from the tail).
func (l *List) Index(i int) ([]byte, bool) {
	if i < 0 {
		i += l.n
	}
	if i < 0 || i >= l.n {
		return nil, false
	}
	var out []byte
	l.Each(i, i >= l.n/2, func(_ int, e []byte) bool {
		out = append([]byte{}, e...)
		return false
	})
	return out, true
}

// Range returns copies of elements start..stop inclusive, with Redis's index rules.
func (l *List) Range(start, stop int) [][]byte {
	start, stop, ok := normRange(start, stop, l.n)
	if !ok {
		return [][]byte{}
	}
	out := make([][]byte, 0, stop-start+1)
	l.Each(start, false, func(i int, e []byte) bool {
		if i > stop {
			return false
		}
		out = append(out, append([]byte{}, e...))
		return true
	})
	return out
}

// EachInRange calls fn with elements start..stop inclusive (Redis's index rules) in order, and
// reports how many there are (fn nil: only count them). e is valid only during the call.
func (l *List) EachInRange(start, stop int, fn func(e []byte)) int {
	start, stop, ok := normRange(start, stop, l.n)
	if !ok {
		return 0
	}
	if fn != nil {
		l.Each(start, false, func(i int, e []byte) bool {
			if i > stop {
				return false
			}
			fn(e)
			return true
		})
	}
	return stop - start + 1
}

// normRange applies LRANGE/LTRIM index rules: negatives count from the end, clamps.
func normRange(start, stop, n int) (int, int, bool) {
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= n {
		return 0, 0, false
	}
	if stop >= n {
		stop = n - 1
	}
	return start, stop, true
}

// Elements returns copies of all elements in order.
func (l *List) Elements() [][]byte { return l.Range(0, -1) }

// Replace sets the contents to els (loading a list; LREM, LSET, LINSERT and LTRIM edit it in
// place, list_edit.go).
func (l *List) Replace(els [][]byte) {
	if l.c != nil {
		for l.c.k > 0 {
			releaseChunk(l.c.popFront())
		}
		l.c.hist, l.c.restored = 0, nil
	}
	l.n = 0
	for _, e := range els {
		l.PushRight(e)
	}
}
