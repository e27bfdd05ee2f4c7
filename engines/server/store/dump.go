package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"sort"
)

// The dump encoding of one value, used by snapshots and AOF base files. Streams are dumped
// node by node with their metadata, groups, consumers and every pending entry (owner, delivery
// time, delivery count), so a loaded stream is the same stream: same last ID, entries-added,
// max-deleted ID, node boundaries, groups' last-delivered IDs and entries-read.
const (
	dumpString = 's'
	dumpList   = 'l'
	dumpStream = 'x'
	dumpSet    = 'S' // then a byte: 1 = intset, 0 = hashtable; a count; the members
	dumpHash   = 'H' // then a byte: 1 = listpack, 0 = hashtable; a count; field, value pairs
	dumpZset   = 'Z' // then a byte: 1 = listpack, 0 = skiplist; a count; member, 8-byte score pairs, ascending
)

// AppendDump appends v's dump encoding to b.
func AppendDump(b []byte, v any) []byte {
	switch v := v.(type) {
	case *String:
		b = append(b, dumpString)
		return append(b, v.B...)
	case *List:
		b = append(b, dumpList)
		b = binary.AppendUvarint(b, uint64(v.n))
		v.Each(0, false, func(_ int, e []byte) bool {
			b = appendBytes(b, e)
			return true
		})
		return b
	case *Stream:
		b = append(b, dumpStream)
		for _, id := range []ID{v.LastID, v.FirstID, v.MaxDeletedID} {
			b = appendID(b, id)
		}
		for _, n := range []uint64{v.EntriesAdded, v.length, uint64(v.NodeMaxEntries), uint64(v.NodeMaxBytes), uint64(len(v.nodes))} {
			b = binary.AppendUvarint(b, n)
		}
		for _, n := range v.nodes {
			b = appendID(b, n.master)
			b = appendID(b, n.last)
			b = binary.AppendUvarint(b, uint64(len(n.fields)))
			for _, f := range n.fields {
				b = appendBytes(b, f)
			}
			b = appendBytes(b, n.data)
			b = binary.AppendUvarint(b, uint64(n.live))
			b = binary.AppendUvarint(b, uint64(n.deleted))
			b = binary.AppendUvarint(b, uint64(n.lpBytes))
		}
		groups := v.Groups()
		b = binary.AppendUvarint(b, uint64(len(groups)))
		for _, g := range groups {
			b = appendBytes(b, []byte(g.Name))
			b = appendID(b, g.LastID)
			b = binary.AppendVarint(b, g.EntriesRead)
			cs := g.SortedConsumers()
			b = binary.AppendUvarint(b, uint64(len(cs)))
			for _, c := range cs {
				b = appendBytes(b, []byte(c.Name))
				b = binary.AppendVarint(b, c.SeenTime)
			}
			b = binary.AppendUvarint(b, uint64(g.PEL.Len()))
			g.PEL.Ascend(ID{}, MaxID, func(nk *Nack) bool {
				b = appendID(b, nk.ID)
				b = binary.AppendVarint(b, nk.DeliveryTime)
				b = binary.AppendVarint(b, nk.DeliveryCount)
				b = appendBytes(b, []byte(nk.Consumer.Name))
				return true
			})
		}
		return b
	case *Set:
		b = append(b, dumpSet, boolByte(v.IsIntset()))
		b = binary.AppendUvarint(b, uint64(v.Len()))
		ms := v.Members()
		if !v.IsIntset() { // map order: sorted so a dump is deterministic
			sort.Slice(ms, func(i, j int) bool { return bytes.Compare(ms[i], ms[j]) < 0 })
		}
		for _, m := range ms {
			b = appendBytes(b, m)
		}
		return b
	case *Hash:
		b = append(b, dumpHash, boolByte(v.IsListpack()))
		b = binary.AppendUvarint(b, uint64(v.Len()))
		var ps [][2][]byte
		v.Each(func(f, val []byte) { ps = append(ps, [2][]byte{f, val}) })
		if !v.IsListpack() {
			sort.Slice(ps, func(i, j int) bool { return bytes.Compare(ps[i][0], ps[j][0]) < 0 })
		}
		for _, p := range ps {
			b = appendBytes(b, p[0])
			b = appendBytes(b, p[1])
		}
		return b
	case *Zset:
		b = append(b, dumpZset, boolByte(v.IsListpack()))
		b = binary.AppendUvarint(b, uint64(v.Len()))
		v.Range(0, v.Len()-1, false, func(m []byte, s float64) bool {
			b = appendBytes(b, m)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s)) // exact, inf included
			return true
		})
		return b
	}
	panic("store: AppendDump of unknown value type")
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendID(b []byte, id ID) []byte {
	b = binary.AppendUvarint(b, id.Ms)
	return binary.AppendUvarint(b, id.Seq)
}

var errBadDump = errors.New("store: malformed dump")

type dumpReader struct {
	p   []byte
	bad bool
}

func (r *dumpReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.bad = true
		r.p = nil
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *dumpReader) varint() int64 {
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.bad = true
		r.p = nil
		return 0
	}
	r.p = r.p[n:]
	return v
}

// count reads a length that must fit in what is left (each item takes at least one byte).
func (r *dumpReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.p)) {
		r.bad = true
		r.p = nil
		return 0
	}
	return int(n)
}

func (r *dumpReader) bytes() []byte {
	n := r.count()
	if r.bad {
		return nil
	}
	out := append([]byte(nil), r.p[:n]...)
	r.p = r.p[n:]
	return out
}

func (r *dumpReader) id() ID { return ID{r.uvarint(), r.uvarint()} }

// DecodeDump decodes a value dumped by AppendDump; the result does not alias b.
func DecodeDump(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, errBadDump
	}
	r := &dumpReader{p: b[1:]}
	switch b[0] {
	case dumpString:
		return &String{B: append([]byte(nil), b[1:]...)}, nil
	case dumpList:
		n := r.count()
		l := &List{}
		for i := 0; i < n && !r.bad; i++ {
			l.PushRight(r.bytes())
		}
		if r.bad || len(r.p) != 0 {
			return nil, errBadDump
		}
		return l, nil
	case dumpSet, dumpHash:
		if len(r.p) == 0 || r.p[0] > 1 {
			return nil, errBadDump
		}
		compact := r.p[0] == 1
		r.p = r.p[1:]
		n := r.count()
		var v any
		if b[0] == dumpSet {
			s := NewSet()
			if !compact {
				s.toHashtable()
			}
			for i := 0; i < n && !r.bad; i++ {
				// The encoding is restored as dumped: no limit converts it on load.
				if m := r.bytes(); !r.bad && !s.Add(m, 1<<62) {
					return nil, errBadDump
				}
			}
			if compact && (len(s.m) > 0 || s.m != nil) {
				return nil, errBadDump // a non-integer member in an intset
			}
			v = s
		} else {
			h := NewHash()
			if !compact {
				h.toHashtable()
			}
			for i := 0; i < n && !r.bad; i++ {
				f := r.bytes()
				val := r.bytes()
				if !r.bad && !h.Set(f, val, 1<<62, 1<<62) {
					return nil, errBadDump
				}
			}
			v = h
		}
		if r.bad || len(r.p) != 0 {
			return nil, errBadDump
		}
		return v, nil
	case dumpZset:
		if len(r.p) == 0 || r.p[0] > 1 {
			return nil, errBadDump
		}
		z := NewZset(r.p[0] == 1)
		r.p = r.p[1:]
		n := r.count()
		for i := 0; i < n && !r.bad; i++ {
			m := r.bytes()
			if r.bad || len(r.p) < 8 {
				return nil, errBadDump
			}
			s := math.Float64frombits(binary.LittleEndian.Uint64(r.p))
			r.p = r.p[8:]
			// The encoding is restored as dumped: no limit converts it on load.
			if math.IsNaN(s) || !z.Set(m, s, 1<<62, 1<<62) {
				return nil, errBadDump
			}
		}
		if r.bad || len(r.p) != 0 {
			return nil, errBadDump
		}
		return z, nil
	case dumpStream:
		s := NewStream() // with its arena
		s.LastID, s.FirstID, s.MaxDeletedID = r.id(), r.id(), r.id()
		s.EntriesAdded, s.length = r.uvarint(), r.uvarint()
		s.NodeMaxEntries, s.NodeMaxBytes = int(r.uvarint()), int(r.uvarint())
		nn := r.count()
		for i := 0; i < nn && !r.bad; i++ {
			n := &node{master: r.id(), last: r.id()}
			nf := r.count()
			for j := 0; j < nf && !r.bad; j++ {
				n.fields = append(n.fields, r.bytes())
			}
			n.data = r.bytes()
			n.live, n.deleted, n.lpBytes = int(r.uvarint()), int(r.uvarint()), int(r.uvarint())
			if i < nn-1 && !r.bad {
				s.seal(n) // finished nodes live in the arena, as Append leaves them
			}
			s.nodes = append(s.nodes, n)
		}
		ng := r.count()
		for i := 0; i < ng && !r.bad; i++ {
			name := string(r.bytes())
			g, _ := s.CreateGroup(name, r.id(), r.varint())
			if g == nil {
				return nil, errBadDump
			}
			nc := r.count()
			for j := 0; j < nc && !r.bad; j++ {
				c, _ := g.CreateConsumer(string(r.bytes()), 0)
				c.SeenTime = r.varint()
			}
			np := r.count()
			for j := 0; j < np && !r.bad; j++ {
				nk := &Nack{ID: r.id(), DeliveryTime: r.varint(), DeliveryCount: r.varint()}
				c := g.Consumers[string(r.bytes())]
				if c == nil || g.PEL.Get(nk.ID) != nil {
					return nil, errBadDump
				}
				nk.Consumer = c
				c.PEL.Add(g.PEL.Add(*nk))
			}
		}
		if r.bad || len(r.p) != 0 {
			return nil, errBadDump
		}
		return s, nil
	}
	return nil, errBadDump
}
