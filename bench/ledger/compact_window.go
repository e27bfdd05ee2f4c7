package ledger

import "sync/atomic"

// window holds the marks of one producer's messages from the compact ledger's watermark on, by
// block of blockSize messages aligned on sequence numbers. A block is hot, its marks as Ledger
// keeps them (an entry, a delivery count per group and, with SetDeliveryShards, a shard mark per
// group), or frozen (dense.go): deep in a backlog, where every message of the block is
// acknowledged and has reached each group once or not yet, its marks are held in a few bits per
// message. Any change to a frozen block's marks thaws it first; reading flags
// and delivery counts does not.
type window struct {
	lo     uint64 // the watermark: the first message held
	n      int    // messages held: lo to lo+n-1
	base   uint64 // the block number (seq >> blockShift) of blocks[0], lo's
	blocks []*block
	groups int
	shards bool     // SetDeliveryShards: hot blocks keep a shard mark per group
	spare  []*block // hot blocks given back, reused before new ones are made
	// scratch is a block a frozen one is decoded into to be read whole (scan).
	scratch *block
	// coldNext is the next block considered for freezing; freezeAfter how long the window must
	// be before any is (freezeAfterMessages; tests lower it).
	// hotBlocks how many blocks at its end stay hot (hotTail; tests lower them).
	coldNext    uint64
	freezeAfter int
	hotBlocks   uint64
	frozen      int // blocks frozen now
	froze       int // blocks ever frozen (tests)
	// held and dense are the ledger's counts of the messages kept one by one and of the bytes of
	// frozen blocks (Compact.Kept, Compact.DenseBytes).
	held, dense *atomic.Int64
}

const (
	blockShift = 10
	blockSize  = 1 << blockShift
	blockMask  = blockSize - 1
	// freezeAfterMessages is how long a producer's window must be before its blocks freeze: a
	// backlog, well beyond what messages in flight and a consumer's slow second keep unresolved
	// in a run whose consumers keep up (about 1.3 MB with one group).
	freezeAfterMessages = 64 * blockSize
	// hotTail is how many blocks at the window's end stay hot whatever they hold: the answers
	// of the messages in flight land there. A block that still has an unanswered message twice
	// as far back is passed over for good.
	hotTail = 8
	// maxSpare is how many given-back hot blocks a window keeps for reuse.
	maxSpare = 4
)

// block is blockSize messages' marks, hot or frozen (fz set; ent, d and sh nil).
type block struct {
	ent []entry
	d   [][]uint32 // [group][offset]
	sh  [][]uint16 // [group][offset], with SetDeliveryShards
	fz  *frozen
}

func newWindow(groups int, held, dense *atomic.Int64) window {
	return window{groups: groups, freezeAfter: freezeAfterMessages, hotBlocks: hotTail, held: held, dense: dense}
}

// loc is message i's block and offset in it.
func (w *window) loc(i int) (*block, int) {
	s := w.lo + uint64(i)
	return w.blocks[s>>blockShift-w.base], int(s & blockMask)
}

// hot is loc with the block thawed: its marks can change.
func (w *window) hot(i int) (*block, int) {
	bl, o := w.loc(i)
	if bl.fz != nil {
		w.thaw(bl)
	}
	return bl, o
}

// at is message i's entry, to change.
func (w *window) at(i int) *entry {
	bl, o := w.hot(i)
	return &bl.ent[o]
}

// flags is message i's flags.
func (w *window) flags(i int) uint8 {
	bl, o := w.loc(i)
	if bl.fz != nil {
		return bl.fz.flags(o)
	}
	return bl.ent[o].flags
}

// count is message i's delivery count for group g.
func (w *window) count(g, i int) uint32 {
	bl, o := w.loc(i)
	if bl.fz != nil {
		return bl.fz.count(g, o)
	}
	return bl.d[g][o]
}

// shard is message i's shard mark for group g.
func (w *window) shard(g, i int) uint16 {
	bl, o := w.loc(i)
	switch {
	case bl.fz != nil:
		return bl.fz.shard(g, o)
	case bl.sh == nil:
		return 0
	}
	return bl.sh[g][o]
}

// head is the first message's entry (n > 0).
func (w *window) head() entry {
	bl, o := w.loc(0)
	if bl.fz != nil {
		return bl.fz.entry(o)
	}
	return bl.ent[o]
}

// grow extends the window to n messages, zero-marked.
func (w *window) grow(n int) {
	if n <= w.n {
		return
	}
	w.held.Add(int64(n - w.n))
	if len(w.blocks) == 0 {
		w.base = w.lo >> blockShift
	}
	need := int((w.lo+uint64(n)-1)>>blockShift-w.base) + 1
	added := need > len(w.blocks)
	for len(w.blocks) < need {
		w.blocks = append(w.blocks, w.newBlock())
	}
	w.n = n
	if added {
		w.freezeCold()
	}
}

// drop moves the watermark over the first k messages, which the caller has accounted for, and
// gives back the blocks left behind.
func (w *window) drop(k int) {
	w.lo += uint64(k)
	w.n -= k
	cut := min(int(w.lo>>blockShift-w.base), len(w.blocks))
	for _, bl := range w.blocks[:cut] {
		w.release(bl)
	}
	clear(w.blocks[:cut])
	w.blocks = w.blocks[cut:] // append reallocates the live part only once the room runs out
	w.base = w.lo >> blockShift
}

func (w *window) newBlock() *block {
	if k := len(w.spare); k > 0 {
		bl := w.spare[k-1]
		w.spare = w.spare[:k-1]
		return bl
	}
	bl := &block{ent: make([]entry, blockSize), d: make([][]uint32, w.groups)}
	for g := range bl.d {
		bl.d[g] = make([]uint32, blockSize)
	}
	if w.shards {
		bl.sh = make([][]uint16, w.groups)
		for g := range bl.sh {
			bl.sh[g] = make([]uint16, blockSize)
		}
	}
	return bl
}

// release gives a block back: a hot one, cleared, to the spares.
func (w *window) release(bl *block) {
	if bl.fz != nil {
		w.dense.Add(-bl.fz.bytes())
		w.frozen--
		return
	}
	if len(w.spare) == maxSpare {
		return
	}
	clear(bl.ent)
	for g := range bl.d {
		clear(bl.d[g])
	}
	for g := range bl.sh {
		clear(bl.sh[g])
	}
	w.spare = append(w.spare, bl)
}

// setShards makes hot blocks keep shard marks (SetDeliveryShards, before the run).
func (w *window) setShards() {
	w.shards = true
	w.spare = nil
	for _, bl := range w.blocks {
		if bl.fz == nil && bl.sh == nil {
			bl.sh = make([][]uint16, w.groups)
			for g := range bl.sh {
				bl.sh[g] = make([]uint16, blockSize)
			}
		}
	}
}

// scan calls fn for every message of the window in order, with its block (hot, or a frozen one
// decoded into scratch) and offset; fn must not change the window.
func (w *window) scan(fn func(i int, bl *block, o int)) {
	i := 0
	for k, bl := range w.blocks {
		if i >= w.n {
			return
		}
		o := 0
		if k == 0 {
			o = int(w.lo & blockMask)
		}
		if bl.fz != nil {
			if w.scratch == nil {
				w.scratch = &block{ent: make([]entry, blockSize), d: make([][]uint32, w.groups)}
				for g := range w.scratch.d {
					w.scratch.d[g] = make([]uint32, blockSize)
				}
			}
			bl.fz.decode(w.scratch)
			bl = w.scratch
		}
		for ; o < blockSize && i < w.n; o++ {
			fn(i, bl, o)
			i++
		}
	}
}

// freezeCold freezes the blocks that became cold: fully in a window longer than freezeAfter,
// past the head's block (where deliveries land and the watermark moves) and hotBlocks from the
// end.
func (w *window) freezeCold() {
	if w.n <= w.freezeAfter || w.groups > maxDenseGroups {
		return
	}
	last := (w.lo + uint64(w.n) - 1) >> blockShift
	w.coldNext = max(w.coldNext, w.base+1)
	for ; w.coldNext+w.hotBlocks <= last; w.coldNext++ {
		bl := w.blocks[w.coldNext-w.base]
		if bl.fz != nil {
			continue
		}
		switch freezable(bl) {
		case freezeLater:
			if w.coldNext+2*w.hotBlocks > last {
				return
			}
		case freezeNow:
			if fz := freezeBlock(bl); fz != nil {
				w.release(&block{ent: bl.ent, d: bl.d, sh: bl.sh})
				*bl = block{fz: fz}
				w.frozen++
				w.froze++
				w.held.Add(-blockSize)
				w.dense.Add(fz.bytes())
			}
		}
	}
}

// thaw makes a frozen block hot again.
func (w *window) thaw(bl *block) {
	fz := bl.fz
	*bl = *w.newBlock()
	fz.decode(bl)
	w.frozen--
	w.held.Add(blockSize)
	w.dense.Add(-fz.bytes())
}
