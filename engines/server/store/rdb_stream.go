package store

import (
	"encoding/binary"
	"sort"
	"strconv"
)

// Streams in Redis 7.0's DUMP payload (RDB_TYPE_STREAM_LISTPACKS_2): each node as a listpack in
// Redis's stream layout (master entry, then flags, ms-diff, seq-diff, values or fields and
// values, lp-count per entry, deleted entries kept with their flag), then the metadata, the
// groups with their PEL and consumers.
const rdbStreamListpacks2 = 19

// rdbStreamListpacks is Redis 6's stream (RDB 9): no first ID, max-deleted ID, entries-added
// or groups' entries-read, which Redis 7.0's load derives as decodeRDBStream does.
const rdbStreamListpacks = 15

func appendRawID(b []byte, id ID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, id.Ms), id.Seq)
}

func itoa(n int64) []byte { return strconv.AppendInt(nil, n, 10) }

// appendRDBStream appends the stream's object serialization (after the type byte).
func appendRDBStream(b []byte, s *Stream, lzf bool) []byte {
	b = rdbAppendLen(b, uint64(len(s.nodes)))
	var fv [][]byte
	for _, n := range s.nodes {
		els := [][]byte{itoa(int64(n.live)), itoa(int64(n.deleted)), itoa(int64(len(n.fields)))}
		els = append(els, n.fields...)
		els = append(els, itoa(0))
		for off := 0; off < len(n.data); {
			var id ID
			var flags byte
			id, flags, off, fv = n.decode(off, fv)
			nf := len(fv) / 2
			els = append(els, itoa(int64(flags)), itoa(int64(id.Ms-n.master.Ms)), itoa(int64(id.Seq-n.master.Seq)))
			lpCount := int64(nf + 3)
			if flags&flagSameFields != 0 {
				for i := 0; i < nf; i++ {
					els = append(els, fv[2*i+1])
				}
			} else {
				els = append(els, itoa(int64(nf)))
				els = append(els, fv...)
				lpCount += int64(nf + 1)
			}
			els = append(els, itoa(lpCount))
		}
		b = rdbAppendStr(b, appendRawID(nil, n.master), lzf)
		b = rdbAppendStr(b, appendListpack(nil, els), lzf)
	}
	b = rdbAppendLen(b, s.length)
	for _, id := range []ID{s.LastID, s.FirstID, s.MaxDeletedID} {
		b = rdbAppendLen(rdbAppendLen(b, id.Ms), id.Seq)
	}
	b = rdbAppendLen(b, s.EntriesAdded)
	groups := s.Groups()
	b = rdbAppendLen(b, uint64(len(groups)))
	for _, g := range groups {
		b = rdbAppendStr(b, []byte(g.Name), lzf)
		b = rdbAppendLen(rdbAppendLen(b, g.LastID.Ms), g.LastID.Seq)
		b = rdbAppendLen(b, uint64(g.EntriesRead))
		b = rdbAppendLen(b, uint64(g.PEL.Len()))
		g.PEL.Ascend(ID{}, MaxID, func(nk *Nack) bool {
			b = appendRawID(b, nk.ID)
			b = binary.LittleEndian.AppendUint64(b, uint64(nk.DeliveryTime))
			b = rdbAppendLen(b, uint64(nk.DeliveryCount))
			return true
		})
		cs := g.SortedConsumers()
		b = rdbAppendLen(b, uint64(len(cs)))
		for _, c := range cs {
			b = rdbAppendStr(b, []byte(c.Name), lzf)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.SeenTime))
			b = rdbAppendLen(b, uint64(c.PEL.Len()))
			c.PEL.Ascend(ID{}, MaxID, func(nk *Nack) bool {
				b = appendRawID(b, nk.ID)
				return true
			})
		}
	}
	return b
}

func (r *rdbReader) u64() uint64 {
	n, enc := r.length()
	if enc {
		r.bad = true
	}
	return n
}

func (r *rdbReader) rawID() ID {
	b := r.take(16)
	if r.bad {
		return ID{}
	}
	return ID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

func (r *rdbReader) le64() int64 {
	b := r.take(8)
	if r.bad {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// decodeRDBStream reads a stream serialization; entries are appended anew (node boundaries
// follow this server's limits), then the metadata is set as dumped. v1 is Redis 6's layout.
func decodeRDBStream(r *rdbReader, lim RDBLimits, v1 bool) (*Stream, error) {
	s := NewStream()
	s.NodeMaxEntries, s.NodeMaxBytes = lim.NodeMaxEntries, lim.NodeMaxBytes
	var deleted []ID
	nodes := r.count()
	last := ID{}
	for i := 0; i < nodes && !r.bad; i++ {
		key := r.str()
		blob := r.str()
		if r.bad || len(key) != 16 {
			return nil, errRDBBad
		}
		master := ID{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
		els, err := decodeListpack(blob)
		if err != nil {
			return nil, err
		}
		num := func(j int) (int64, bool) {
			if j >= len(els) {
				return 0, false
			}
			n, err := strconv.ParseInt(string(els[j]), 10, 64)
			return n, err == nil
		}
		nf, ok := num(2)
		if !ok || nf < 0 || int(nf)+4 > len(els) {
			return nil, errRDBBad
		}
		fields := els[3 : 3+nf]
		j := int(3 + nf + 1)
		for j < len(els) {
			flags, ok1 := num(j)
			msd, ok2 := num(j + 1)
			seqd, ok3 := num(j + 2)
			if !ok1 || !ok2 || !ok3 {
				return nil, errRDBBad
			}
			j += 3
			id := ID{master.Ms + uint64(msd), master.Seq + uint64(seqd)}
			var fv [][]byte
			if flags&flagSameFields != 0 {
				if j+len(fields) > len(els) {
					return nil, errRDBBad
				}
				for k, f := range fields {
					fv = append(fv, f, els[j+k])
				}
				j += len(fields)
			} else {
				n, ok := num(j)
				if !ok || n < 0 || j+1+int(2*n) > len(els) {
					return nil, errRDBBad
				}
				fv = els[j+1 : j+1+int(2*n)]
				j += 1 + int(2*n)
			}
			j++ // lp-count
			if j > len(els) || !last.Less(id) || len(fv) == 0 {
				return nil, errRDBBad
			}
			last = id
			s.Append(id, fv)
			if flags&flagDeleted != 0 {
				deleted = append(deleted, id)
			}
		}
	}
	for _, id := range deleted {
		s.Delete(id)
	}
	length := r.u64()
	lastID := ID{r.u64(), r.u64()}
	if v1 {
		// As Redis 7.0 loads a 6.x stream: no tombstones known, every entry counted as added,
		// the first ID the first live entry's (kept by Append and Delete above).
		if r.bad || length != s.length {
			return nil, errRDBBad
		}
		s.LastID, s.MaxDeletedID, s.EntriesAdded = lastID, ID{}, length
	} else {
		firstID := ID{r.u64(), r.u64()}
		maxDel := ID{r.u64(), r.u64()}
		added := r.u64()
		if r.bad || length != s.length {
			return nil, errRDBBad
		}
		s.LastID, s.FirstID, s.MaxDeletedID, s.EntriesAdded = lastID, firstID, maxDel, added
	}
	ng := r.count()
	for i := 0; i < ng && !r.bad; i++ {
		name := r.str()
		glast := ID{r.u64(), r.u64()}
		var read int64
		if v1 {
			read = s.EstimateDistanceFromFirstEverEntry(glast)
		} else {
			read = int64(r.u64())
		}
		if r.bad {
			break
		}
		g, ok := s.CreateGroup(string(name), glast, read)
		if !ok {
			return nil, errRDBBad
		}
		np := r.count()
		pel := map[ID]*Nack{}
		for j := 0; j < np && !r.bad; j++ {
			nk := &Nack{ID: r.rawID(), DeliveryTime: r.le64(), DeliveryCount: int64(r.u64())}
			pel[nk.ID] = nk
		}
		nc := r.count()
		for j := 0; j < nc && !r.bad; j++ {
			cname := r.str()
			seen := r.le64()
			c, created := g.CreateConsumer(string(cname), seen)
			if !created {
				return nil, errRDBBad
			}
			c.SeenTime = seen
			cp := r.count()
			for k := 0; k < cp && !r.bad; k++ {
				nk := pel[r.rawID()]
				if nk == nil || nk.Consumer != nil {
					return nil, errRDBBad
				}
				nk.Consumer = c
			}
		}
		for _, nk := range pel {
			if nk.Consumer == nil {
				return nil, errRDBBad // a pending entry without an owner
			}
		}
		// In ID order, as the PELs are kept.
		var ids []ID
		for id := range pel {
			ids = append(ids, id)
		}
		sortIDs(ids)
		for _, id := range ids {
			nk := pel[id]
			nk.Consumer.PEL.Add(g.PEL.Add(*nk))
		}
	}
	if r.bad {
		return nil, errRDBBad
	}
	return s, nil
}

func sortIDs(ids []ID) { sort.Slice(ids, func(i, j int) bool { return ids[i].Less(ids[j]) }) }
