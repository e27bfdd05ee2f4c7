package store

import (
	"runtime"
	"sync/atomic"
)

// Stream node bytes live off the Go heap, in chunks from the OS that each stream carves with
// its own bump allocator (as fastcache does). The garbage collector neither scans nor counts
// them, so the process does not carry GOGC's headroom (up to another copy of the live heap)
// for stream data, and RSS stays close to the data's size.
//
// The tail node writes straight into a block reserved at the end of the stream's current
// chunk; sealing it hands the unused rest of the block back, so appending costs no copy and
// makes no garbage. Streams are queues, appended at the tail and trimmed at the head, so a
// chunk's nodes die together: a chunk is unmapped when its last node is trimmed or deleted,
// and all of a stream's chunks when the stream itself is collected (one runtime cleanup per
// stream).
//
// Nothing may keep a slice of a node's bytes beyond the node's life: readers copy (replies
// are encoded while the store lock is held).
//
// Chunks (and the list's slabs) are faulted in populateStep at a time just ahead of the write
// position, not on first touch: a page fault per 4 KB inside the event loop was 7.6% of an
// unpipelined LPUSH's CPU. Not all at once either: a whole populated 1 MB slab, most of it
// unused at the end of a load, was what put the RSS of a 1 M list or stream 1-3% over Redis's.

const (
	minChunk    = 16 << 10
	maxChunk    = 1 << 20
	maxArenaObj = maxChunk / 8 // larger node data stays on the Go heap

	// populateStep is how far ahead fresh memory is faulted in: one system call per 16 pages,
	// and at most 64 KB resident beyond what is used.
	populateStep = 64 << 10
)

// prefault makes mem[:end] resident given that mem[:ready] is, faulting in whole steps (mem
// comes from mapChunk, so step boundaries are page boundaries); it returns the new mark.
func prefault(mem []byte, ready, end int) int {
	if end <= ready {
		return ready
	}
	to := min(len(mem), (end+populateStep-1)/populateStep*populateStep)
	populate(mem[ready:to])
	return to
}

var arenaMapped atomic.Int64

// ArenaBytes is the memory currently mapped for stream nodes outside the Go heap.
func ArenaBytes() int64 { return arenaMapped.Load() }

type chunk struct {
	mem   []byte
	off   int
	ready int // mem[:ready] is faulted in
	live  int // blocks not yet released
}

// streamArena allocates one stream's node bytes. Used under the store lock, except freeAll,
// which runs only once the stream is unreachable.
type streamArena struct {
	cur    *chunk
	chunks []*chunk
	next   int // size of the next chunk
}

func newStreamArena() *streamArena { return &streamArena{next: minChunk} }

// alloc returns a block of n bytes and its chunk, or a heap slice and nil.
func (a *streamArena) alloc(n int) ([]byte, *chunk) {
	if n == 0 || n > maxArenaObj {
		return make([]byte, n), nil
	}
	if a.cur == nil || a.cur.off+n > len(a.cur.mem) {
		size := a.next
		for size < n {
			size *= 2
		}
		a.next = min(2*size, maxChunk)
		mem, err := mapChunk(size)
		if err != nil {
			return make([]byte, n), nil
		}
		arenaMapped.Add(int64(size))
		old := a.cur
		a.cur = &chunk{mem: mem}
		a.chunks = append(a.chunks, a.cur)
		if old != nil && old.live == 0 {
			a.unmap(old)
		}
	}
	c := a.cur
	c.ready = prefault(c.mem, c.ready, c.off+n)
	b := c.mem[c.off : c.off+n : c.off+n]
	c.off += n
	c.live++
	return b, c
}

// shrink gives back the end of block b (the chunk's last allocation) beyond used bytes.
func (a *streamArena) shrink(c *chunk, b []byte, used int) []byte {
	if c == a.cur && len(b) > 0 && &c.mem[c.off-cap(b)] == &b[:1][0] {
		c.off -= cap(b) - used
	}
	return b[:used:used]
}

// release frees one block of c.
func (a *streamArena) release(c *chunk) {
	c.live--
	if c.live == 0 && c != a.cur {
		a.unmap(c)
	}
}

func (a *streamArena) unmap(c *chunk) {
	if c.mem == nil {
		return
	}
	arenaMapped.Add(-int64(len(c.mem)))
	unmapChunk(c.mem)
	c.mem = nil
	for i, x := range a.chunks {
		if x == c {
			a.chunks = append(a.chunks[:i], a.chunks[i+1:]...)
			break
		}
	}
}

func (a *streamArena) freeAll() {
	for _, c := range a.chunks {
		if c.mem != nil {
			arenaMapped.Add(-int64(len(c.mem)))
			unmapChunk(c.mem)
			c.mem = nil
		}
	}
	a.chunks, a.cur = nil, nil
}

// tailBlock is the block reserved for a stream's tail node.
func (s *Stream) tailBlock() int {
	if s.NodeMaxBytes > 0 && s.NodeMaxBytes <= 8<<10 {
		return 2 * s.NodeMaxBytes
	}
	return 16 << 10
}

// newNodeData reserves the tail node's bytes.
func (s *Stream) newNodeData(n *node) {
	b, c := s.arena.alloc(s.tailBlock())
	n.data, n.chunk = b[:0], c
}

// grow makes room for need more bytes in n.data; a node that outgrows its arena block moves
// to the Go heap (the block is released).
func (s *Stream) grow(n *node, need int) {
	if len(n.data)+need <= cap(n.data) {
		return
	}
	nd := make([]byte, len(n.data), 2*(len(n.data)+need))
	copy(nd, n.data)
	if n.chunk != nil {
		s.arena.release(n.chunk)
		n.chunk = nil
	}
	n.data = nd
}

// seal finishes a node that is no longer the tail: its unused reserve goes back, and heap
// bytes move into the arena.
func (s *Stream) seal(n *node) {
	if n.chunk != nil {
		n.data = s.arena.shrink(n.chunk, n.data[:cap(n.data)], len(n.data))
		return
	}
	b, c := s.arena.alloc(len(n.data))
	copy(b, n.data)
	n.data, n.chunk = b, c
}

// dropNode releases a node removed from the stream.
func (s *Stream) dropNode(n *node) {
	if n.chunk != nil {
		s.arena.release(n.chunk)
		n.chunk = nil
	}
}

// attachArena gives a new stream its arena, freed when the stream is collected.
func (s *Stream) attachArena() {
	s.arena = newStreamArena()
	runtime.AddCleanup(s, func(a *streamArena) { a.freeAll() }, s.arena)
}
