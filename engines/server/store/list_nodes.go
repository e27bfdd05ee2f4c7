package store

import "math"

// A List's Redis quicklist nodes. The chunks (list.go) hold the elements in 8 KB blocks laid out
// for this server; beside them the list keeps, per node Redis 7.0.15 would have, its element
// count and its listpack's size (lpBytes), updated by the same rules as quicklist.c, so DUMP
// cuts its listpacks where Redis's are and the payload is byte-identical to Redis's:
//   - a push goes into the end node when _quicklistNodeAllowInsert says so (node size + element
//     length + 8 within optimization_level[-fill-1] for a negative fill; within 8192 bytes and
//     fewer than fill elements for a positive one), else into a new node;
//   - a pop (LPOP, RPOP, LMOVE, LMPOP, LTRIM's ends) shrinks the end node, dropping it empty;
//   - LSET rewrites the element in its node (quicklistReplaceEntry: no split);
//   - LREM deletes from the nodes holding the matches (quicklistDelEntry: no merge);
//   - RESTORE keeps the dumped nodes as they are, skipping empty ones (rdbLoadObject).
//   - LINSERT puts the element into the pivot's node. Redis does so while the node has room
//     (_quicklistInsert); when it has none, Redis moves the element to a neighbour, or splits
//     the node and merges around it, which is not modelled: DUMP after such a LINSERT is
//     RESTORE-compatible but may cut its listpacks elsewhere than Redis (and so may a later
//     push next to that node).

// The quicklist constants (quicklist.c).
const (
	lpHeader           = 7 // listpack header (6) and terminator (1)
	qlSizeSafetyLimit  = 8192
	qlSizeEstimate     = 8 // SIZE_ESTIMATE_OVERHEAD
	qlPackedThreshold  = 1 << 30
	qlFillMax          = 1<<15 - 1
	DefaultListFill    = -2 // list-max-listpack-size's default
	listFillZeroOffset = DefaultListFill
)

var qlOptimizationLevel = [5]int{4096, 8192, 16384, 32768, 65536}

// qnode is one Redis quicklist node: its element count and its listpack's byte size (for a
// plain node, MaxInt32: it takes no push).
type qnode struct {
	n     int32
	sz    int32
	plain bool
}

// qring is the nodes' deque, a ring of a power-of-two size.
type qring struct {
	r       []qnode
	head, k int
}

func (q *qring) at(i int) *qnode { return &q.r[(q.head+i)&(len(q.r)-1)] }

func (q *qring) grow() {
	nr := make([]qnode, max(4, 2*len(q.r)))
	for i := 0; i < q.k; i++ {
		nr[i] = *q.at(i)
	}
	q.r, q.head = nr, 0
}

func (q *qring) addFront(nd qnode) {
	if q.k == len(q.r) {
		q.grow()
	}
	q.head = (q.head - 1) & (len(q.r) - 1)
	q.r[q.head] = nd
	q.k++
}

func (q *qring) addBack(nd qnode) {
	if q.k == len(q.r) {
		q.grow()
	}
	q.r[(q.head+q.k)&(len(q.r)-1)] = nd
	q.k++
}

// removeAt drops node i, shifting the shorter side.
func (q *qring) removeAt(i int) {
	if i < q.k-1-i {
		for j := i; j > 0; j-- {
			*q.at(j) = *q.at(j - 1)
		}
		q.head = (q.head + 1) & (len(q.r) - 1)
	} else {
		for j := i; j < q.k-1; j++ {
			*q.at(j) = *q.at(j + 1)
		}
	}
	q.k--
}

func (q *qring) reset() { q.head, q.k = 0, 0 }

// normFill is quicklistSetFill's clamp. A fill of 0 makes the same nodes as 1 (one element
// each: _quicklistNodeAllowInsert needs count < fill, _quicklistNodeAllowMerge count sum <=
// fill), so 0 is stored as 1 and a List's zero value can mean the default, -2.
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

// nodeLimits are fill as two bounds, so that _quicklistNodeAllowInsert is one test, fits: with
// a negative fill a node takes an element while its size + the element's length + 8 is within
// optimization_level[-fill-1] (past it, the 8192-byte safety limit's count test needs count <
// fill, never true); with a positive fill while that is within 8192 and it has fewer than fill
// elements. A plain node's size is MaxInt32, so it never fits; an element of packed_threshold
// (1 GB) or more never fits either (it gets a plain node, newNode).
func nodeLimits(fill int) (maxSz, maxN int32) {
	if fill < 0 {
		return int32(qlOptimizationLevel[-fill-1]), math.MaxInt32
	}
	return qlSizeSafetyLimit, int32(fill)
}

func (nd *qnode) fits(c *listChunks, n int) bool {
	return int(nd.sz)+n+qlSizeEstimate <= int(c.maxSz) && nd.n < c.maxN
}

// nodePushBack and nodePushFront account a push of v at the tail or the head.
func (l *List) nodePushBack(v []byte) {
	q := &l.c.nodes
	if q.k > 0 {
		if nd := &q.r[(q.head+q.k-1)&(len(q.r)-1)]; nd.fits(l.c, len(v)) {
			nd.n++
			nd.sz += int32(lpEntrySize(v))
			return
		}
	}
	q.addBack(newNode(v))
}

func (l *List) nodePushFront(v []byte) {
	q := &l.c.nodes
	if q.k > 0 {
		if nd := &q.r[q.head]; nd.fits(l.c, len(v)) {
			nd.n++
			nd.sz += int32(lpEntrySize(v))
			return
		}
	}
	q.addFront(newNode(v))
}

// newNode is a node holding only v: a listpack, or plain from packed_threshold (1 GB) on.
func newNode(v []byte) qnode {
	if len(v) >= qlPackedThreshold {
		return qnode{n: 1, sz: math.MaxInt32, plain: true}
	}
	return qnode{n: 1, sz: int32(lpHeader + lpEntrySize(v))}
}

// nodePopFront and nodePopBack account the pop of v from the head or the tail.
func (l *List) nodePopFront(v []byte) {
	q := &l.c.nodes
	if q.k == 0 {
		return
	}
	nd := &q.r[q.head]
	if nd.n--; nd.n > 0 {
		nd.sz -= int32(lpEntrySize(v))
		return
	}
	q.head = (q.head + 1) & (len(q.r) - 1)
	q.k--
}

func (l *List) nodePopBack(v []byte) {
	q := &l.c.nodes
	if q.k == 0 {
		return
	}
	nd := &q.r[(q.head+q.k-1)&(len(q.r)-1)]
	if nd.n--; nd.n > 0 {
		nd.sz -= int32(lpEntrySize(v))
		return
	}
	q.k--
}

// nodeOf returns the index of the node holding element i and that node's first element index.
func (l *List) nodeOf(i int) (ni, first int) {
	q := &l.c.nodes
	if i < l.n/2 {
		for ni = 0; ni < q.k; ni++ {
			if n := int(q.at(ni).n); i < first+n {
				return ni, first
			} else {
				first += n
			}
		}
		return q.k - 1, first
	}
	last := l.n
	for ni = q.k - 1; ni > 0; ni-- {
		last -= int(q.at(ni).n)
		if i >= last {
			return ni, last
		}
	}
	return 0, 0
}

// nodeReplace accounts LSET of element i from old to v.
func (l *List) nodeReplace(i int, old, v []byte) {
	if l.c.nodes.k == 0 {
		return
	}
	ni, _ := l.nodeOf(i)
	nd := l.c.nodes.at(ni)
	if nd.plain {
		return
	}
	nd.sz += int32(lpEntrySize(v) - lpEntrySize(old))
}

// nodeDropLeft and nodeDropRight account LTRIM's removal of the first and the last k
// elements (quicklistDelRange: whole nodes go, the end node shrinks), before the chunks drop
// them; both are called on the untrimmed list.
func (l *List) nodeDropLeft(k int) {
	q := &l.c.nodes
	start := 0
	for k > 0 && q.k > 0 {
		nd := q.at(0)
		if int(nd.n) <= k {
			k -= int(nd.n)
			start += int(nd.n)
			q.removeAt(0)
			continue
		}
		l.Each(start, false, func(i int, e []byte) bool {
			if i >= start+k {
				return false
			}
			nd.sz -= int32(lpEntrySize(e))
			return true
		})
		nd.n -= int32(k)
		return
	}
}

func (l *List) nodeDropRight(k int) {
	q := &l.c.nodes
	end := l.n
	for k > 0 && q.k > 0 {
		nd := q.at(q.k - 1)
		if int(nd.n) <= k {
			k -= int(nd.n)
			end -= int(nd.n)
			q.removeAt(q.k - 1)
			continue
		}
		l.Each(end-k, false, func(i int, e []byte) bool {
			if i >= end {
				return false
			}
			nd.sz -= int32(lpEntrySize(e))
			return true
		})
		nd.n -= int32(k)
		return
	}
}

// nodeRemove accounts LREM v count (the same walk as Remove), before the chunks remove them:
// each match leaves its node, a node left empty is dropped.
func (l *List) nodeRemove(v []byte, count int) {
	q := &l.c.nodes
	want := count
	if want < 0 {
		want = -want
	}
	if want == 0 {
		want = l.n
	}
	if q.k == 0 || l.n == 0 {
		return
	}
	esz := int32(lpEntrySize(v))
	var emptied []int
	found := 0
	if count >= 0 {
		ni, end := 0, int(q.at(0).n)
		l.Each(0, false, func(i int, e []byte) bool {
			for i >= end {
				ni++
				end += int(q.at(ni).n)
			}
			if string(e) == string(v) {
				nd := q.at(ni)
				if nd.n--; nd.n == 0 {
					emptied = append(emptied, ni)
				} else {
					nd.sz -= esz
				}
				found++
			}
			return found < want
		})
		for j := len(emptied) - 1; j >= 0; j-- {
			q.removeAt(emptied[j])
		}
		return
	}
	ni, start := q.k-1, l.n-int(q.at(q.k-1).n)
	l.Each(l.n-1, true, func(i int, e []byte) bool {
		for i < start {
			ni--
			start -= int(q.at(ni).n)
		}
		if string(e) == string(v) {
			nd := q.at(ni)
			if nd.n--; nd.n == 0 {
				emptied = append(emptied, ni)
			} else {
				nd.sz -= esz
			}
			found++
		}
		return found < want
	})
	for _, j := range emptied { // descending already
		q.removeAt(j)
	}
}

// nodeInsert accounts LINSERT of v next to element pivot, before the chunks insert it: into
// the pivot's node, as Redis's _quicklistInsert does while that node has room; the splits and
// merges Redis makes when it has none are not modelled.
func (l *List) nodeInsert(pivot int, v []byte) {
	if l.c.nodes.k == 0 {
		return
	}
	ni, _ := l.nodeOf(pivot)
	nd := l.c.nodes.at(ni)
	nd.n++
	nd.sz += int32(lpEntrySize(v))
}

// appendNode pushes els at the tail as one node of their own (RESTORE of a packed node, or with
// plain of a plain one); nothing for no elements, as Redis skips an empty listpack.
func (l *List) appendNode(els [][]byte, plain bool) {
	if len(els) == 0 {
		return
	}
	l.init()
	nd := qnode{n: int32(len(els)), sz: lpHeader, plain: plain}
	for _, e := range els {
		l.pushRightData(e)
		nd.sz += int32(lpEntrySize(e))
	}
	if plain {
		nd.sz = math.MaxInt32 // takes no push, whatever its length (Redis's threshold may be lower)
	}
	l.c.nodes.addBack(nd)
}

// eachNode calls fn with each node's elements (valid only during the call) and whether the
// node is plain, from the head.
func (l *List) eachNode(fn func(els [][]byte, plain bool)) {
	if l.n == 0 {
		return
	}
	q := &l.c.nodes
	var els [][]byte
	ni := 0
	l.Each(0, false, func(_ int, e []byte) bool {
		els = append(els, e)
		if ni < q.k && len(els) == int(q.at(ni).n) {
			fn(els, q.at(ni).plain)
			els, ni = els[:0], ni+1
		}
		return true
	})
	if len(els) > 0 { // only if the nodes miscounted: still every element, in one more node
		fn(els, false)
	}
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

// Clone is a deep copy with the same fill and the same nodes (COPY: quicklistDup).
func (l *List) Clone() *List {
	nl := &List{fill: l.fill}
	if l.n == 0 {
		return nl
	}
	nl.init()
	l.Each(0, false, func(_ int, e []byte) bool {
		nl.pushRightData(e)
		return true
	})
	q := &l.c.nodes
	for i := 0; i < q.k; i++ {
		nl.c.nodes.addBack(*q.at(i))
	}
	return nl
}
