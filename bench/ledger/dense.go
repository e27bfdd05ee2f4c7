package ledger

import (
	"math"
	"math/bits"
	"unsafe"
)

// The dense form of a backlog. When consumers stop (or fall far behind), the compact ledger's
// window holds every message sent since, each acknowledged and waiting for its delivery: 16
// bytes of marks and 4 per group in a hot block. A frozen block keeps the same marks exactly in
// a few bits per message, by what a backlog's marks have in common:
//   - flags: every message is sent and acknowledged; only the batch starts differ (a bitmap);
//   - delivery counts: each message has reached each group once or not at all: a bit per group
//     when the block's messages all have, or none has, else a bit per message and group; the
//     shard marks of the delivered (SetDeliveryShards) in as many bits as the largest needs;
//   - intended times and the producer's next message when the answer came (`after` plus the
//     message's own number): a paced producer's times change by its interval from one message
//     to the next, and a batch's messages share their answer's next number (and, under
//     rate: max, their time). Each is kept as its first value and its differences, from message
//     to message or only at batch starts (when it does not change within a batch), whichever
//     is smaller, less their least value and packed in as many bits as the largest needs
//     (frame-of-reference bit packing, as column stores and time-series databases keep
//     timestamps).
//
// A paced producer's block of 1024 messages in batches of 16 takes about 330 bytes: a third of a
// byte a message, against 20 hot (BenchmarkDenseBacklog).

// maxDenseGroups is the most receiving groups a frozen block marks (a bit each).
const maxDenseGroups = 64

// maxDenseBits is the widest pair of packed differences a block is frozen with: wider (times
// far apart, a producer's answers out of order) and the block stays hot, where it costs 20 bytes
// a message either way.
const maxDenseBits = 48

// frozen is one block's marks, dense.
type frozen struct {
	starts [blockSize / 64]uint64 // batch starts
	// once: bit g, group g received every message once; some: bit g, group g received some of
	// them once, as its bitmap in got says (in order of g); else none.
	once, some uint64
	got        [][blockSize / 64]uint64
	in         column // intended times
	next       column // after + the message's offset in the block
	packed     []uint64
	// shards holds each group's shard marks, blockSize of shardWidth bits per group, when the
	// ledger keeps them.
	shards     []uint64
	shardWidth uint8
}

// column is how one of a frozen block's values is packed: its value at offset 0, and a
// difference for each later message (byBatch: only at batch starts, 0 elsewhere), less least, in
// width bits.
type column struct {
	first, least int64
	width        uint8
	byBatch      bool
}

func (f *frozen) bytes() int64 {
	return int64(unsafe.Sizeof(*f)) + 8*int64(cap(f.packed)+cap(f.shards)) + int64(cap(f.got))*blockSize/8
}

// start says whether message o starts a batch.
func (f *frozen) start(o int) bool { return f.starts[o/64]&(1<<(o%64)) != 0 }

type freezeVerdict uint8

const (
	freezeNow   freezeVerdict = iota
	freezeLater               // a message is not answered yet
	freezeNever               // a message failed, or was delivered more than once
)

// freezable says whether a hot block's marks fit the dense form.
func freezable(bl *block) freezeVerdict {
	for o := range bl.ent {
		f := bl.ent[o].flags &^ flagBatchStart
		if f&(flagAcked|flagFailed) == 0 {
			return freezeLater
		}
		if f != flagSent|flagAcked {
			return freezeNever
		}
	}
	for _, d := range bl.d {
		for _, n := range d {
			if n > 1 {
				return freezeNever
			}
		}
	}
	return freezeNow
}

// freezeBlock is bl's dense form, nil if its differences are too wide (maxDenseBits).
func freezeBlock(bl *block) *frozen {
	e := bl.ent
	f := &frozen{}
	for o := range blockSize {
		if e[o].flags&flagBatchStart != 0 {
			f.starts[o/64] |= 1 << (o % 64)
		}
	}
	intended := func(o int) int64 { return e[o].intended }
	next := func(o int) int64 { return int64(o) + int64(e[o].after) }
	f.in, f.next = f.plan(intended), f.plan(next)
	if int(f.in.width)+int(f.next.width) > maxDenseBits {
		return nil
	}
	var bitsUsed int
	for o := 1; o < blockSize; o++ {
		for _, c := range []*column{&f.in, &f.next} {
			if !c.byBatch || f.start(o) {
				bitsUsed += int(c.width)
			}
		}
	}
	f.packed = make([]uint64, (bitsUsed+63)/64)
	p := bitPacker{words: f.packed}
	for o := 1; o < blockSize; o++ {
		f.in.put(&p, f.start(o), intended(o)-intended(o-1))
		f.next.put(&p, f.start(o), next(o)-next(o-1))
	}
	for g, d := range bl.d {
		all, none := true, true
		for _, n := range d {
			all, none = all && n == 1, none && n == 0
		}
		switch {
		case all:
			f.once |= 1 << g
		case !none:
			f.some |= 1 << g
			var got [blockSize / 64]uint64
			for o, n := range d {
				got[o/64] |= uint64(n) << (o % 64)
			}
			f.got = append(f.got, got)
		}
	}
	if bl.sh != nil {
		var most uint16
		for _, sh := range bl.sh {
			for _, k := range sh {
				most = max(most, k)
			}
		}
		f.shardWidth = uint8(bits.Len16(most))
		f.shards = make([]uint64, (len(bl.sh)*blockSize*int(f.shardWidth)+63)/64)
		p := bitPacker{words: f.shards}
		for _, sh := range bl.sh {
			for _, k := range sh {
				p.put(uint64(k), f.shardWidth)
			}
		}
	}
	return f
}

// plan chooses how a value is packed: by message, or by batch when it does not change within
// one and that takes fewer bits.
func (f *frozen) plan(v func(o int) int64) column {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	bLo, bHi := lo, hi
	byBatch, starts := true, 0
	for o := 1; o < blockSize; o++ {
		d := v(o) - v(o-1)
		lo, hi = min(lo, d), max(hi, d)
		switch {
		case f.start(o):
			starts++
			bLo, bHi = min(bLo, d), max(bHi, d)
		case d != 0:
			byBatch = false
		}
	}
	c := column{first: v(0), least: lo, width: uint8(bits.Len64(uint64(hi) - uint64(lo)))}
	if !byBatch {
		return c
	}
	b := column{first: v(0), byBatch: true}
	if starts > 0 {
		b.least, b.width = bLo, uint8(bits.Len64(uint64(bHi)-uint64(bLo)))
	}
	if starts*int(b.width) <= (blockSize-1)*int(c.width) {
		return b
	}
	return c
}

// put packs the difference d of the message after the previous one (start: it starts a batch).
func (c *column) put(p *bitPacker, start bool, d int64) {
	if !c.byBatch || start {
		p.put(uint64(d)-uint64(c.least), c.width)
	}
}

// step is the difference put packed for the next message.
func (c *column) step(p *bitPacker, start bool) int64 {
	if c.byBatch && !start {
		return 0
	}
	return c.least + int64(p.get(c.width))
}

// flags is message o's flags.
func (f *frozen) flags(o int) uint8 {
	if f.start(o) {
		return flagSent | flagAcked | flagBatchStart
	}
	return flagSent | flagAcked
}

// count is message o's delivery count for group g.
func (f *frozen) count(g, o int) uint32 {
	if f.some&(1<<g) == 0 {
		return uint32(f.once >> g & 1)
	}
	got := &f.got[bits.OnesCount64(f.some&(1<<g-1))]
	return uint32(got[o/64] >> (o % 64) & 1)
}

// shard is message o's shard mark for group g (0 if the ledger keeps none).
func (f *frozen) shard(g, o int) uint16 {
	if f.shardWidth == 0 {
		return 0
	}
	p := bitPacker{words: f.shards, pos: uint((g*blockSize + o) * int(f.shardWidth))}
	return uint16(p.get(f.shardWidth))
}

// entry is message o's entry, decoded from the block's start.
func (f *frozen) entry(o int) entry {
	p := bitPacker{words: f.packed}
	in, next := f.in.first, f.next.first
	for k := 1; k <= o; k++ {
		in += f.in.step(&p, f.start(k))
		next += f.next.step(&p, f.start(k))
	}
	return entry{intended: in, after: uint32(next - int64(o)), flags: f.flags(o)}
}

// decode writes the block's marks into the hot block bl.
func (f *frozen) decode(bl *block) {
	p := bitPacker{words: f.packed}
	in, next := f.in.first, f.next.first
	for o := range blockSize {
		if o > 0 {
			in += f.in.step(&p, f.start(o))
			next += f.next.step(&p, f.start(o))
		}
		bl.ent[o] = entry{intended: in, after: uint32(next - int64(o)), flags: f.flags(o)}
	}
	for g, d := range bl.d {
		for o := range d {
			d[o] = f.count(g, o)
		}
	}
	p = bitPacker{words: f.shards}
	for _, sh := range bl.sh {
		for o := range sh {
			sh[o] = uint16(p.get(f.shardWidth))
		}
	}
}

// bitPacker writes and reads values of up to 64 bits at consecutive bit positions.
type bitPacker struct {
	words []uint64
	pos   uint
}

func (p *bitPacker) put(v uint64, width uint8) {
	if width == 0 {
		return
	}
	w, s := p.pos/64, p.pos%64
	p.words[w] |= v << s
	if s+uint(width) > 64 {
		p.words[w+1] |= v >> (64 - s)
	}
	p.pos += uint(width)
}

func (p *bitPacker) get(width uint8) uint64 {
	if width == 0 {
		return 0
	}
	w, s := p.pos/64, p.pos%64
	v := p.words[w] >> s
	if s+uint(width) > 64 {
		v |= p.words[w+1] << (64 - s)
	}
	p.pos += uint(width)
	return v & (1<<width - 1)
}
