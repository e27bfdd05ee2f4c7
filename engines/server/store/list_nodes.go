package store

import "math"

// The Redis quicklist nodes a List DUMPs (its listpacks), computed at DUMP time from the
// elements and what the list has been through, so that DUMP is byte-identical to Redis 7.0.15's
// for the histories whose nodes follow from the elements alone. The list keeps no per-node state
// on its push and pop path (tracking each node's size there, by quicklist.c's rules, cost
// 15-60 ns per push+pop pair in the store's benchmarks: engines/server/README.md);
// it sets one bit per kind of change (hist) and, once RESTOREd, keeps the restored node counts.
//
// quicklist.c's rule (_quicklistNodeAllowInsert): a push goes into the end node while that
// node's listpack size + the element's length + 8 is within optimization_level[-fill-1] for a
// negative fill, or within 8192 bytes with fewer than fill elements for a positive one; else into
// a new node. Elements of packed_threshold (1 GB) or more get a plain node of their own.
//
// Byte-identical to Redis (the differential tests check each):
//   - RPUSH only, and RPUSH with RPOP (pops at the pushed end leave the nodes the remaining
//     elements would have): the rule applied from the head;
//   - LPUSH only, and LPUSH with LPOP: the rule applied from the tail;
//   - a list RESTOREd (or COPYed from one) and not changed since: the restored nodes, empty
//     listpacks skipped, as rdbLoadObject keeps them;
//   - a list Redis holds in one node, whatever its pushes and pops (each element Redis let into
//     the node, the rule lets in: the node held at least the elements before it still there),
//     unless an LSET grew it past the limit (Redis does not split it then).
// Only RESTORE-compatible (a valid quicklist of the same elements, which Redis restores to the
// same list, but possibly cut elsewhere): pushes at one end and pops at the other (a queue:
// Redis's head node keeps the boundary it had before the pops), pushes at both ends, LSET,
// LREM, LINSERT and LTRIM (Redis edits nodes in place, splitting and merging for LINSERT),
// and a restored list changed afterwards. For those the rule is applied from the head.

// hist bits: the kinds of change a list has had since it was created, restored or replaced.
const (
	histPushLeft = 1 << iota
	histPushRight
	histPopLeft
	histPopRight
	histEdit // LSET, LREM, LINSERT, LTRIM
)

// The quicklist constants (quicklist.c).
const (
	lpHeader          = 7 // listpack header (6) and terminator (1)
	qlSizeSafetyLimit = 8192
	qlSizeEstimate    = 8 // SIZE_ESTIMATE_OVERHEAD
	qlPackedThreshold = 1 << 30
	qlFillMax         = 1<<15 - 1
	DefaultListFill   = -2 // list-max-listpack-size's default
)

var qlOptimizationLevel = [5]int{4096, 8192, 16384, 32768, 65536}

// qnode is one quicklist node: its element count, its listpack's byte size, whether it is plain.
type qnode struct {
	n     int32
	sz    int32
	plain bool
}

// normFill is quicklistSetFill's clamp. A fill of 0 makes the same nodes as 1 (one element
// each: _quicklistNodeAllowInsert needs count < fill), so 0 is stored as 1 and a List's zero
// value can mean the default, -2.
func normFill(fill int) int32 {
	switch {
	case fill > qlFillMax:
		fill = qlFillMax
	case fill < -5:
		fill = -5
	case fill == 0:
		fill = 1
	}
	return int32(fill)
}

// NewList is an empty list whose nodes follow list-max-listpack-size fill, as Redis fixes a
// quicklist's fill when it creates it (a later CONFIG SET changes only new lists).
func NewList(fill int) *List { return &List{fill: normFill(fill)} }

// Fill is the list's quicklist fill (its zero value: the default).
func (l *List) Fill() int {
	if l.fill == 0 {
		return DefaultListFill
	}
	return int(l.fill)
}

// nodeLimits are fill as two bounds, so that _quicklistNodeAllowInsert is one test (fits): with
// a negative fill a node takes an element while its size + the element's length + 8 is within
// optimization_level[-fill-1] (past it, the 8192-byte safety limit's count test needs count <
// fill, never true); with a positive fill while that is within 8192 and it has fewer than fill
// elements.
func nodeLimits(fill int) (maxSz, maxN int) {
	if fill < 0 {
		return qlOptimizationLevel[-fill-1], math.MaxInt32
	}
	return qlSizeSafetyLimit, fill
}

// nodes returns the quicklist nodes DUMP writes, from the head (see the top of this file).
func (l *List) nodes() []qnode {
	if l.n == 0 {
		return nil
	}
	if l.c.restored != nil && l.c.hist == 0 {
		return l.c.restored
	}
	maxSz, maxN := nodeLimits(l.Fill())
	var out []qnode
	var cur qnode
	add := func(_ int, e []byte) bool {
		if cur.n > 0 && !cur.plain && len(e) < qlPackedThreshold && int(cur.sz)+len(e)+qlSizeEstimate <= maxSz && int(cur.n) < maxN {
			cur.n++
			cur.sz += int32(lpEntrySize(e))
			return true
		}
		if cur.n > 0 {
			out = append(out, cur)
		}
		cur = qnode{n: 1, sz: int32(lpHeader + lpEntrySize(e)), plain: len(e) >= qlPackedThreshold}
		return true
	}
	if h := l.c.hist; h != 0 && h&^(histPushLeft|histPopLeft) == 0 {
		l.Each(l.n-1, true, add) // pushed at the head only: the rule from the tail
		out = append(out, cur)
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}
	l.Each(0, false, add)
	return append(out, cur)
}

// eachNode calls fn with each node's elements (valid only during the call) and whether the
// node is plain, from the head.
func (l *List) eachNode(fn func(els [][]byte, plain bool)) {
	nodes := l.nodes()
	var els [][]byte
	ni := 0
	l.Each(0, false, func(_ int, e []byte) bool {
		els = append(els, e)
		if ni < len(nodes) && len(els) == int(nodes[ni].n) {
			fn(els, nodes[ni].plain)
			els, ni = els[:0], ni+1
		}
		return true
	})
	if len(els) > 0 { // only if the nodes miscounted: still every element, in one more node
		fn(els, false)
	}
}

// appendNode pushes els at the tail of a list being RESTOREd as one node of their own (a packed
// node, or with plain a plain one); nothing for no elements, as Redis skips an empty listpack.
func (l *List) appendNode(els [][]byte, plain bool) {
	if len(els) == 0 {
		return
	}
	for _, e := range els {
		l.PushRight(e)
	}
	l.c.hist = 0
	l.c.restored = append(l.c.restored, qnode{n: int32(len(els)), plain: plain})
}

// Clone is a deep copy with the same fill and, unchanged since RESTORE, the same nodes (COPY:
// quicklistDup).
func (l *List) Clone() *List {
	nl := &List{fill: l.fill}
	if l.n == 0 {
		return nl
	}
	l.Each(0, false, func(_ int, e []byte) bool {
		nl.PushRight(e)
		return true
	})
	nl.c.hist, nl.c.restored = l.c.hist, l.c.restored // restored is never written in place
	return nl
}

// lpEntrySize is the size of v's listpack entry (lpAppend: integers in canonical form as
// integers), its backlen included.
func lpEntrySize(v []byte) int {
	if len(v) > 20 || len(v) == 0 || v[0] > '9' || v[0] < '0' && v[0] != '-' {
		return lpStringSize(len(v))
	}
	return lpShortSize(v)
}

// lpShortSize is lpEntrySize of a string of at most 20 bytes that may be an integer.
func lpShortSize(v []byte) int {
	if n, ok := lpInt(v); ok {
		switch {
		case n >= 0 && n <= 127:
			return 2
		case n >= -4096 && n <= 4095:
			return 3
		case n >= -1<<15 && n < 1<<15:
			return 4
		case n >= -1<<23 && n < 1<<23:
			return 5
		case n >= -1<<31 && n < 1<<31:
			return 6
		}
		return 10
	}
	return len(v) + 2 // under 64 bytes: a 1-byte header and a 1-byte backlen
}

// lpStringSize is the size of the listpack entry of a string of l bytes.
func lpStringSize(l int) int {
	enc := l + 5
	switch {
	case l < 64:
		enc = l + 1
	case l < 4096:
		enc = l + 2
	}
	return enc + backlenSize(enc)
}

// lpInt is lpStringToInt64: v as an int64 when it is one in canonical form (no sign but a
// leading '-', no leading zeros, at most 20 bytes).
func lpInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 20 {
		return 0, false
	}
	if len(v) == 1 && v[0] == '0' {
		return 0, true
	}
	p, neg := v, false
	if p[0] == '-' {
		neg, p = true, p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var u uint64
	for i, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		// Only a 20th digit can overflow (a division per digit here cost ~50 ns per element).
		if i == 19 && (u > math.MaxUint64/10 || u == math.MaxUint64/10 && d > math.MaxUint64%10) {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}
