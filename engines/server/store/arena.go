package store

import (
	"runtime"
	"sync"
)

// Finished stream nodes keep their bytes off the Go heap, in chunks from the OS carved by a bump
// allocator (as fastcache does). The garbage collector neither scans nor counts them, so the
// process does not carry GOGC's headroom (up to another copy of the live heap) for stream data,
// and RSS stays close to the data's size. Streams are queues: nodes are appended at the tail
// and trimmed at the head, so a chunk's nodes die at about the same time and the chunk is
// returned to the OS when its last node is collected (a runtime cleanup on the node).
//
// Nothing may keep a slice of a node's bytes beyond the node's lifetime: readers copy
// (replies are encoded while the store lock is held).

const (
	chunkSize   = 1 << 20
	maxArenaObj = chunkSize / 8 // larger node data stays on the Go heap
)

type chunk struct {
	mem  []byte
	off  int
	live int // allocations not yet released; guarded by arena.mu
}

type arena struct {
	mu  sync.Mutex
	cur *chunk
	// mapped is the bytes currently held from the OS, for tests and INFO.
	mapped int64
}

var nodeArena = &arena{}

// ArenaBytes is the memory currently mapped for stream nodes outside the Go heap.
func ArenaBytes() int64 {
	nodeArena.mu.Lock()
	defer nodeArena.mu.Unlock()
	return nodeArena.mapped
}

// alloc returns n bytes and the chunk holding them, or a heap slice and nil.
func (a *arena) alloc(n int) ([]byte, *chunk) {
	if n == 0 || n > maxArenaObj {
		return make([]byte, n), nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil || a.cur.off+n > len(a.cur.mem) {
		mem, err := mapChunk(chunkSize)
		if err != nil {
			return make([]byte, n), nil
		}
		old := a.cur
		a.cur = &chunk{mem: mem}
		a.mapped += chunkSize
		if old != nil && old.live == 0 {
			a.unmapLocked(old)
		}
	}
	c := a.cur
	b := c.mem[c.off : c.off+n : c.off+n]
	c.off += n
	c.live++
	return b, c
}

func (a *arena) release(c *chunk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c.live--
	if c.live == 0 && c != a.cur {
		a.unmapLocked(c)
	}
}

func (a *arena) unmapLocked(c *chunk) {
	if c.mem == nil {
		return
	}
	unmapChunk(c.mem)
	c.mem = nil
	a.mapped -= chunkSize
}

// seal moves a finished node's bytes into the arena.
func (n *node) seal() {
	b, c := nodeArena.alloc(len(n.data))
	copy(b, n.data)
	n.data = b
	if c != nil {
		runtime.AddCleanup(n, func(c *chunk) { nodeArena.release(c) }, c)
	}
}
