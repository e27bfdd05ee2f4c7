package store

import (
	"slices"
	"sort"
)

// chunked is a sorted sequence of fixed-size records kept in fixed-capacity chunks, a
// two-level B+-tree: the PEL's storage. Against one sorted slice it has no doubling slack
// (a slice that just grew holds twice what it needs) and no O(n) shift on a middle insert;
// against a map or a tree of heap nodes it costs no per-entry object. A chunk holds a[lo:hi],
// so removing the oldest entry (acknowledging in delivery order) is O(1).
type chunked[T keyed] struct {
	c []*pchunk[T]
	n int
	// spare is the last chunk, kept when the sequence empties, for the next insert: a PEL that
	// every acknowledgement empties (a consumer group at light load) otherwise allocated a
	// chunk per message, 10 KiB for the group's PEL and 4 KiB for the consumer's, 88% of the
	// stream design's allocation. An empty PEL keeps one chunk, as a slice keeps its capacity.
	spare *pchunk[T]
}

type keyed interface{ key() ID }

const chunkCap = 256

type pchunk[T keyed] struct {
	lo, hi int
	a      [chunkCap]T
}

func (c *pchunk[T]) len() int { return c.hi - c.lo }

// find returns the chunk and index of the first record with key >= id (ci == len(c) if none).
func (s *chunked[T]) find(id ID) (ci, i int) {
	ci = sort.Search(len(s.c), func(k int) bool {
		ch := s.c[k]
		return !ch.a[ch.hi-1].key().Less(id)
	})
	if ci == len(s.c) {
		return ci, 0
	}
	ch := s.c[ci]
	i = ch.lo + sort.Search(ch.len(), func(k int) bool { return !ch.a[ch.lo+k].key().Less(id) })
	return ci, i
}

// get returns a pointer to the record for id, valid until the next insert or remove.
func (s *chunked[T]) get(id ID) *T {
	ci, i := s.find(id)
	if ci < len(s.c) && s.c[ci].a[i].key() == id {
		return &s.c[ci].a[i]
	}
	return nil
}

// insert adds v (its key must not be present) and returns where it is stored, valid until
// the next insert or remove.
func (s *chunked[T]) insert(v T) *T {
	s.n++
	id := v.key()
	if k := len(s.c); k == 0 || s.c[k-1].a[s.c[k-1].hi-1].key().Less(id) {
		// Appending, the common case: fill the last chunk, then start a new one.
		if k == 0 || s.c[k-1].hi == chunkCap {
			if k > 0 && s.c[k-1].lo > 0 {
				s.c[k-1].compact()
			} else {
				nc := s.spare
				if nc == nil {
					nc = &pchunk[T]{}
				}
				s.spare = nil
				s.c = append(s.c, nc)
				k++
			}
		}
		ch := s.c[k-1]
		ch.a[ch.hi] = v
		ch.hi++
		return &ch.a[ch.hi-1]
	}
	ci, i := s.find(id)
	ch := s.c[ci]
	if ch.len() == chunkCap {
		// Split: the upper half moves to a new chunk after this one.
		nc := &pchunk[T]{hi: chunkCap / 2}
		copy(nc.a[:], ch.a[chunkCap/2:])
		clear(ch.a[chunkCap/2:])
		ch.hi = chunkCap / 2
		s.c = slices.Insert(s.c, ci+1, nc)
		if i > chunkCap/2 {
			ch, i = nc, i-chunkCap/2
		}
	}
	if ch.hi == chunkCap {
		i -= ch.lo
		ch.compact()
		i += ch.lo
	}
	copy(ch.a[i+1:ch.hi+1], ch.a[i:ch.hi])
	ch.a[i] = v
	ch.hi++
	return &ch.a[i]
}

// compact moves a[lo:hi] to the front of the chunk.
func (c *pchunk[T]) compact() {
	n := copy(c.a[:], c.a[c.lo:c.hi])
	clear(c.a[n:c.hi])
	c.lo, c.hi = 0, n
}

// remove deletes the record for id and reports whether it was present.
func (s *chunked[T]) remove(id ID) bool {
	ci, i := s.find(id)
	if ci == len(s.c) || s.c[ci].a[i].key() != id {
		return false
	}
	s.n--
	ch := s.c[ci]
	var zero T
	if i == ch.lo {
		ch.a[i] = zero
		ch.lo++
	} else {
		copy(ch.a[i:ch.hi-1], ch.a[i+1:ch.hi])
		ch.hi--
		ch.a[ch.hi] = zero
	}
	switch {
	case ch.len() == 0:
		if len(s.c) == 1 {
			ch.lo, ch.hi = 0, 0 // its records are zeroed already
			s.spare = ch
		}
		s.c = slices.Delete(s.c, ci, ci+1)
	case ch.len() < chunkCap/4 && ci+1 < len(s.c) && ch.len()+s.c[ci+1].len() <= chunkCap/2:
		// Merge a sparse chunk with its successor, so random acknowledgements do not leave
		// many nearly empty chunks behind.
		next := s.c[ci+1]
		ch.compact()
		ch.hi += copy(ch.a[ch.hi:], next.a[next.lo:next.hi])
		s.c = slices.Delete(s.c, ci+1, ci+2)
	}
	if cap(s.c) > 64 && cap(s.c) > 4*len(s.c) {
		s.c = slices.Clip(slices.Clone(s.c)) // give back the index of a drained backlog
	}
	return true
}

// ascend calls fn for records with start <= key <= end in order until fn returns false. fn
// must not insert or remove.
func (s *chunked[T]) ascend(start, end ID, fn func(*T) bool) {
	ci, i := s.find(start)
	for ; ci < len(s.c); ci++ {
		ch := s.c[ci]
		if i < ch.lo {
			i = ch.lo
		}
		for ; i < ch.hi; i++ {
			if end.Less(ch.a[i].key()) {
				return
			}
			if !fn(&ch.a[i]) {
				return
			}
		}
		i = 0
	}
}

func (s *chunked[T]) first() (ID, bool) {
	if len(s.c) == 0 {
		return ID{}, false
	}
	return s.c[0].a[s.c[0].lo].key(), true
}

func (s *chunked[T]) last() (ID, bool) {
	if len(s.c) == 0 {
		return ID{}, false
	}
	ch := s.c[len(s.c)-1]
	return ch.a[ch.hi-1].key(), true
}
