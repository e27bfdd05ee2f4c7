package store

import (
	"bytes"
	"encoding/binary"
	"math"
	"sort"
	"strconv"
)

// ID is a stream entry ID, ms-seq.
type ID struct{ Ms, Seq uint64 }

// MaxID is the largest ID ("+").
var MaxID = ID{math.MaxUint64, math.MaxUint64}

// Compare returns -1, 0 or 1.
func (a ID) Compare(b ID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports a < b.
func (a ID) Less(b ID) bool { return a.Compare(b) < 0 }

// IsZero reports a == 0-0.
func (a ID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr returns the next ID and false if a is already MaxID.
func (a ID) Incr() (ID, bool) {
	if a.Seq == math.MaxUint64 {
		if a.Ms == math.MaxUint64 {
			return a, false
		}
		return ID{a.Ms + 1, 0}, true
	}
	return ID{a.Ms, a.Seq + 1}, true
}

// Decr returns the previous ID and false if a is 0-0.
func (a ID) Decr() (ID, bool) {
	if a.Seq == 0 {
		if a.Ms == 0 {
			return a, false
		}
		return ID{a.Ms - 1, math.MaxUint64}, true
	}
	return ID{a.Ms, a.Seq - 1}, true
}

// String formats "ms-seq".
func (a ID) String() string { return string(a.Append(nil)) }

// Append appends "ms-seq" to b.
func (a ID) Append(b []byte) []byte {
	b = strconv.AppendUint(b, a.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.Seq, 10)
}

// ParseID parses "ms", "ms-seq" (and "ms-*" when allowAutoSeq, reported by autoSeq). With only
// "ms", seq is missingSeq (0 for a start, MaxUint64 for an end).
func ParseID(b []byte, missingSeq uint64, allowAutoSeq bool) (id ID, autoSeq bool, ok bool) {
	if len(b) == 0 || len(b) > 127 {
		return ID{}, false, false
	}
	dash := bytes.IndexByte(b, '-')
	if dash < 0 {
		ms, ok := parseUint(b)
		return ID{ms, missingSeq}, false, ok
	}
	ms, ok := parseUint(b[:dash])
	if !ok {
		return ID{}, false, false
	}
	if allowAutoSeq && len(b) == dash+2 && b[dash+1] == '*' {
		return ID{ms, 0}, true, true
	}
	seq, ok := parseUint(b[dash+1:])
	if !ok {
		return ID{}, false, false
	}
	return ID{ms, seq}, false, true
}

// parseUint is Redis's string2ull as used for stream IDs (strtoull: digits only here).
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

// Entry flags, as in Redis's stream listpacks.
const (
	flagDeleted    = 1
	flagSameFields = 2
)

// node holds up to NodeMaxEntries entries in one byte slice. Each entry is: flags byte, uvarint
// ms delta from the node's master ID, zigzag varint seq delta, then either the values alone (the
// fields are the node's master fields) or a uvarint field count and field/value pairs; every
// string is a uvarint length and its bytes. The node also tracks the size Redis's listpack for
// the same entries would have, so node boundaries (and approximate trimming) match Redis's.
type node struct {
	master  ID
	last    ID
	fields  [][]byte
	data    []byte
	chunk   *chunk // arena chunk holding data, nil when data is on the Go heap
	live    int
	deleted int
	lpBytes int // size of the equivalent Redis listpack
}

// Stream is a Redis stream.
type Stream struct {
	nodes        []*node
	length       uint64
	LastID       ID
	FirstID      ID // valid when length > 0
	MaxDeletedID ID
	EntriesAdded uint64
	groups       map[string]*Group

	// NodeMaxEntries and NodeMaxBytes are stream-node-max-entries and stream-node-max-bytes.
	NodeMaxEntries int
	NodeMaxBytes   int

	arena *streamArena
}

// NewStream returns an empty stream with Redis's default node limits.
func NewStream() *Stream {
	s := &Stream{NodeMaxEntries: 100, NodeMaxBytes: 4096}
	s.attachArena()
	return s
}

// Len is the number of entries.
func (s *Stream) Len() uint64 { return s.length }

// NumNodes is the number of nodes (Redis's radix-tree-nodes approximation).
func (s *Stream) NumNodes() int { return len(s.nodes) }

// NextID is the ID XADD * would assign at nowMs, and false if the stream is exhausted.
func (s *Stream) NextID(nowMs uint64) (ID, bool) {
	if nowMs > s.LastID.Ms {
		return ID{nowMs, 0}, true
	}
	return s.LastID.Incr()
}

// masterFields returns the field names of fv for a new tail node: the previous node's slice
// when the names are the same, as a queue's entries nearly always are, so a million entries
// in 13,000 nodes do not keep 13,000 copies (100 heap bytes a node, a third of the Go heap of
// a 1 M stream). A node's fields are never modified once set, so nodes can share them.
func (s *Stream) masterFields(fv [][]byte) [][]byte {
	nfields := len(fv) / 2
	if k := len(s.nodes); k > 0 {
		if prev := s.nodes[k-1].fields; len(prev) == nfields {
			same := true
			for i, f := range prev {
				if !bytes.Equal(f, fv[2*i]) {
					same = false
					break
				}
			}
			if same {
				return prev
			}
		}
	}
	fields := make([][]byte, nfields)
	for i := range fields {
		fields[i] = bytes.Clone(fv[2*i])
	}
	return fields
}

// Append adds an entry with id, which the caller has checked is greater than LastID. fv is
// field, value, field, value...; the bytes are copied.
func (s *Stream) Append(id ID, fv [][]byte) {
	nfields := len(fv) / 2
	var n *node
	if len(s.nodes) > 0 {
		n = s.nodes[len(s.nodes)-1]
		tot := 0
		for _, e := range fv {
			tot += len(e)
		}
		maxBytes := s.NodeMaxBytes
		if maxBytes == 0 || maxBytes > 1<<30 {
			maxBytes = 1 << 30
		}
		if n.lpBytes+tot >= maxBytes {
			n = nil
		} else if s.NodeMaxEntries > 0 && n.live+n.deleted >= s.NodeMaxEntries {
			n = nil
		}
		if n == nil {
			s.seal(s.nodes[len(s.nodes)-1])
		}
	}
	if n == nil {
		n = &node{master: id, fields: s.masterFields(fv)}
		n.lpBytes = 7 + lpIntSize(1) + lpIntSize(0) + lpIntSize(int64(nfields)) + lpIntSize(0)
		for i := 0; i < nfields; i++ {
			n.lpBytes += lpStrSize(fv[2*i])
		}
		s.newNodeData(n)
		s.nodes = append(s.nodes, n)
	}
	same := len(n.fields) == nfields
	if same {
		for i := 0; i < nfields; i++ {
			if !bytes.Equal(n.fields[i], fv[2*i]) {
				same = false
				break
			}
		}
	}
	flags := byte(0)
	if same {
		flags = flagSameFields
	}
	msd := id.Ms - n.master.Ms
	seqd := int64(id.Seq - n.master.Seq)
	// Room for the encoded entry first, so append never reallocates arena memory behind
	// our back (binary.MaxVarintLen64 bounds each varint).
	need := 1 + 2*binary.MaxVarintLen64
	if !same {
		need += binary.MaxVarintLen64
	}
	for i, e := range fv {
		if same && i%2 == 0 {
			continue
		}
		need += binary.MaxVarintLen64 + len(e)
	}
	s.grow(n, need)
	n.data = append(n.data, flags)
	n.data = binary.AppendUvarint(n.data, msd)
	n.data = binary.AppendVarint(n.data, seqd)
	lp := lpIntSize(int64(flags)) + lpIntSize(int64(msd)) + lpIntSize(seqd)
	lpCount := int64(nfields + 3)
	if same {
		for i := 0; i < nfields; i++ {
			n.data = appendStr(n.data, fv[2*i+1])
			lp += lpStrSize(fv[2*i+1])
		}
	} else {
		n.data = binary.AppendUvarint(n.data, uint64(nfields))
		lp += lpIntSize(int64(nfields))
		for _, e := range fv {
			n.data = appendStr(n.data, e)
			lp += lpStrSize(e)
		}
		lpCount += int64(nfields + 1)
	}
	lp += lpIntSize(lpCount)
	n.lpBytes += lp
	n.live++
	n.last = id
	if s.length == 0 {
		s.FirstID = id
	}
	s.length++
	s.LastID = id
	s.EntriesAdded++
}

func appendStr(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// lpIntSize is the bytes a listpack integer element takes (encoding + backlen).
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 2
	case v >= -4096 && v <= 4095:
		return 3
	case v >= -32768 && v <= 32767:
		return 4
	case v >= -8388608 && v <= 8388607:
		return 5
	case v >= -2147483648 && v <= 2147483647:
		return 6
	}
	return 10
}

// lpStrSize is the bytes a listpack element holding s takes; strings that are canonical
// integers are stored as integers.
func lpStrSize(s []byte) int {
	if len(s) <= 20 {
		if v, ok := canonicalInt(s); ok {
			return lpIntSize(v)
		}
	}
	var l int
	switch {
	case len(s) <= 63:
		l = 1 + len(s)
	case len(s) <= 4095:
		l = 2 + len(s)
	default:
		l = 5 + len(s)
	}
	switch {
	case l <= 127:
		return l + 1
	case l < 16383:
		return l + 2
	case l < 2097151:
		return l + 3
	case l < 268435455:
		return l + 4
	}
	return l + 5
}

func canonicalInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	var tmp [24]byte
	return v, string(strconv.AppendInt(tmp[:0], v, 10)) == string(b)
}

// entryRef locates one entry while iterating.
type entryRef struct {
	node *node
	off  int // offset of the flags byte in node.data
	next int // offset after the entry
	id   ID
}

// decode reads the entry at off. fv receives field/value slices aliasing node data.
func (n *node) decode(off int, fv [][]byte) (id ID, flags byte, next int, out [][]byte) {
	d := n.data
	flags = d[off]
	p := off + 1
	msd, k := binary.Uvarint(d[p:])
	p += k
	seqd, k := binary.Varint(d[p:])
	p += k
	id = ID{n.master.Ms + msd, n.master.Seq + uint64(seqd)}
	out = fv[:0]
	if flags&flagSameFields != 0 {
		for _, f := range n.fields {
			var v []byte
			v, p = readStr(d, p)
			out = append(out, f, v)
		}
	} else {
		nf, k := binary.Uvarint(d[p:])
		p += k
		for i := uint64(0); i < 2*nf; i++ {
			var v []byte
			v, p = readStr(d, p)
			out = append(out, v)
		}
	}
	return id, flags, p, out
}

func readStr(d []byte, p int) ([]byte, int) {
	l, k := binary.Uvarint(d[p:])
	p += k
	e := p + int(l)
	return d[p:e:e], e
}

// skip returns the offset after the entry at off and its ID and flags, without the values.
func (n *node) skip(off int) (ID, byte, int) {
	d := n.data
	flags := d[off]
	p := off + 1
	msd, k := binary.Uvarint(d[p:])
	p += k
	seqd, k := binary.Varint(d[p:])
	p += k
	id := ID{n.master.Ms + msd, n.master.Seq + uint64(seqd)}
	cnt := uint64(len(n.fields))
	if flags&flagSameFields == 0 {
		nf, k := binary.Uvarint(d[p:])
		p += k
		cnt = 2 * nf
	}
	for i := uint64(0); i < cnt; i++ {
		l, k := binary.Uvarint(d[p:])
		p += k + int(l)
	}
	return id, flags, p
}

// firstNode returns the index of the first node that may hold an ID >= id.
func (s *Stream) firstNode(id ID) int {
	// The node before the first node whose master is > id may hold id.
	i := sort.Search(len(s.nodes), func(i int) bool { return id.Less(s.nodes[i].master) })
	if i > 0 {
		i--
	}
	return i
}

// Range calls fn for live entries with start <= id <= end, in order (reverse if rev), until fn
// returns false or count entries were visited (count <= 0: no limit). fv aliases stream memory
// that stays valid (entries are immutable once written).
func (s *Stream) Range(start, end ID, count int, rev bool, fn func(id ID, fv [][]byte) bool) {
	if end.Less(start) || s.length == 0 {
		return
	}
	seen := 0
	var scratch [][]byte
	if !rev {
		for ni := s.firstNode(start); ni < len(s.nodes); ni++ {
			n := s.nodes[ni]
			if end.Less(n.master) {
				return
			}
			if n.last.Less(start) {
				continue
			}
			for off := 0; off < len(n.data); {
				id, flags, next, fv := n.decode(off, scratch)
				scratch = fv
				off = next
				if flags&flagDeleted != 0 || id.Less(start) {
					continue
				}
				if end.Less(id) {
					return
				}
				if !fn(id, fv) {
					return
				}
				seen++
				if count > 0 && seen >= count {
					return
				}
			}
		}
		return
	}
	// Reverse: walk nodes from the end, collecting each node's offsets.
	var offs []int
	for ni := len(s.nodes) - 1; ni >= 0; ni-- {
		n := s.nodes[ni]
		if n.last.Less(start) {
			return
		}
		if end.Less(n.master) {
			continue
		}
		offs = offs[:0]
		for off := 0; off < len(n.data); {
			offs = append(offs, off)
			_, _, off = n.skip(off)
		}
		for k := len(offs) - 1; k >= 0; k-- {
			id, flags, _, fv := n.decode(offs[k], scratch)
			scratch = fv
			if flags&flagDeleted != 0 || end.Less(id) {
				continue
			}
			if id.Less(start) {
				return
			}
			if !fn(id, fv) {
				return
			}
			seen++
			if count > 0 && seen >= count {
				return
			}
		}
	}
}

// Get returns a copy of the fields and values of the live entry id, or nil and false.
func (s *Stream) Get(id ID) ([][]byte, bool) {
	var out [][]byte
	found := false
	s.Range(id, id, 1, false, func(_ ID, fv [][]byte) bool {
		out = make([][]byte, len(fv))
		for i, v := range fv {
			out[i] = bytes.Clone(v)
		}
		found = true
		return false
	})
	return out, found
}

// Delete marks entry id deleted and reports whether it existed.
func (s *Stream) Delete(id ID) bool {
	if s.length == 0 {
		return false
	}
	ni := s.firstNode(id)
	if ni >= len(s.nodes) {
		return false
	}
	n := s.nodes[ni]
	for off := 0; off < len(n.data); {
		eid, flags, next := n.skip(off)
		if eid == id {
			if flags&flagDeleted != 0 {
				return false
			}
			n.data[off] |= flagDeleted
			n.live--
			n.deleted++
			s.length--
			if n.live == 0 {
				s.dropNode(n)
				copy(s.nodes[ni:], s.nodes[ni+1:])
				s.nodes[len(s.nodes)-1] = nil
				s.nodes = s.nodes[:len(s.nodes)-1]
			}
			if s.MaxDeletedID.Less(id) {
				s.MaxDeletedID = id
			}
			if s.length == 0 {
				s.FirstID = ID{}
			} else if id == s.FirstID {
				s.updateFirstID()
			}
			return true
		}
		if id.Less(eid) {
			return false
		}
		off = next
	}
	return false
}

func (s *Stream) updateFirstID() {
	s.FirstID = ID{}
	s.Range(ID{}, MaxID, 1, false, func(id ID, _ [][]byte) bool {
		s.FirstID = id
		return false
	})
}

// LastEntryID returns the ID of the last live entry (the stream's last_id may be larger after
// deletions) and whether there is one.
// XREADGROUP asks it on every read: it walks the last node with a live entry forward, by IDs
// alone, where a reverse Range collected the node's offsets into a fresh slice each time.
func (s *Stream) LastEntryID() (ID, bool) {
	if s.length == 0 {
		return ID{}, false
	}
	for ni := len(s.nodes) - 1; ni >= 0; ni-- {
		n := s.nodes[ni]
		var out ID
		found := false
		for off := 0; off < len(n.data); {
			id, flags, next := n.skip(off)
			off = next
			if flags&flagDeleted == 0 {
				out, found = id, true
			}
		}
		if found {
			return out, true
		}
	}
	return ID{}, false
}

// TrimStrategy selects MAXLEN or MINID trimming.
type TrimStrategy int

const (
	TrimNone TrimStrategy = iota
	TrimMaxLen
	TrimMinID
)

// TrimArgs is XADD's and XTRIM's trimming clause.
type TrimArgs struct {
	Strategy TrimStrategy
	MaxLen   int64
	MinID    ID
	Approx   bool
	// Limit caps the entries removed (0: Redis's default, 100*node size when Approx, else none).
	Limit int64
}

// Trim removes entries per a, as Redis's streamTrim does, and returns how many were removed.
// Approximate trimming removes whole nodes only.
func (s *Stream) Trim(a TrimArgs) int64 {
	if a.Strategy == TrimNone {
		return 0
	}
	limit := a.Limit
	if a.Approx && limit == 0 {
		limit = 100 * int64(s.NodeMaxEntries)
		if s.NodeMaxEntries == 0 {
			limit = 10000
		}
	}
	if !a.Approx {
		limit = 0
	}
	var deleted int64
	for len(s.nodes) > 0 {
		if a.Strategy == TrimMaxLen && int64(s.length) <= a.MaxLen {
			break
		}
		n := s.nodes[0]
		entries := int64(n.live)
		if limit > 0 && deleted+entries > limit {
			break
		}
		removeNode := false
		if a.Strategy == TrimMaxLen {
			removeNode = int64(s.length)-entries >= a.MaxLen
		} else {
			removeNode = n.last.Less(a.MinID)
		}
		if removeNode {
			s.length -= uint64(entries)
			deleted += entries
			s.dropNode(n)
			s.nodes[0] = nil
			s.nodes = s.nodes[1:]
			continue
		}
		if a.Approx {
			break
		}
		// Exact: mark entries deleted one by one inside this node.
		for off := 0; off < len(n.data); {
			id, flags, next := n.skip(off)
			if flags&flagDeleted == 0 {
				stop := false
				if a.Strategy == TrimMaxLen {
					stop = int64(s.length) <= a.MaxLen
				} else {
					stop = !id.Less(a.MinID)
				}
				if stop {
					break
				}
				n.data[off] |= flagDeleted
				n.live--
				n.deleted++
				s.length--
				deleted++
			}
			off = next
		}
		// Like Redis, a node emptied by exact trimming stays until a later trim removes it.
		break
	}
	if len(s.nodes) == 0 || s.nodes[0].master.Compare(s.FirstID) != 0 || deleted > 0 {
		if s.length > 0 {
			s.updateFirstID()
		} else {
			s.FirstID = ID{}
		}
	}
	return deleted
}

// MemoryUsage estimates the bytes the stream occupies (for MEMORY USAGE).
func (s *Stream) MemoryUsage() int64 {
	total := int64(64)
	var prev [][]byte
	for _, n := range s.nodes {
		total += 96 + int64(cap(n.data))
		if len(n.fields) > 0 && len(prev) > 0 && &n.fields[0] == &prev[0] {
			continue // shared with the node before (see masterFields)
		}
		prev = n.fields
		for _, f := range n.fields {
			total += 24 + int64(len(f))
		}
	}
	for _, g := range s.groups {
		total += 128 + int64(g.PEL.Len())*64
	}
	return total
}
