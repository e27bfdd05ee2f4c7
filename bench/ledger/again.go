package ledger

import (
	"encoding/binary"
	"slices"
	"sort"
)

// dupSet is a producer's further deliveries of plainly settled messages (duplicates), by
// seq*groups+group: an exception the ledger keeps one by one for the whole run, since a
// duplicate is charged to a fault window only known at the end. A run with 0.01% duplicated
// keeps 100,000 of them at 1 G messages, so most are packed: sorted by key, each as varints of
// its key and intended time less the previous entry's and its extra deliveries (a few bytes
// where a map entry takes 40 or more). The newest entries, and any change to a packed one, are
// in a small map merged into the packed run when it fills.
type dupSet struct {
	recent map[uint64]redelivered
	packed []byte
	marks  []dupMark // every dupMarkEvery-th packed entry, to start a search at
	n      int       // entries packed
	size   int       // distinct keys in all
}

// dupMark is where a packed entry starts, and the values its differences are from.
type dupMark struct {
	key, prevKey  uint64
	prevIntended  int64
	offset, entry int
}

const (
	dupMarkEvery = 64
	dupMergeAt   = 1024
)

func newDupSet() dupSet { return dupSet{recent: map[uint64]redelivered{}} }

func (s *dupSet) len() int { return s.size }

// get is key k's entry.
func (s *dupSet) get(k uint64) (redelivered, bool) {
	if r, ok := s.recent[k]; ok {
		return r, true
	}
	i := sort.Search(len(s.marks), func(i int) bool { return s.marks[i].key > k }) - 1
	if i < 0 {
		return redelivered{}, false
	}
	m := s.marks[i]
	var found redelivered
	var ok bool
	s.decode(m, func(key uint64, r redelivered) bool {
		if key >= k {
			if key == k {
				found, ok = r, true
			}
			return false
		}
		return true
	})
	return found, ok
}

// set makes r key k's entry; isNew: k had none.
func (s *dupSet) set(k uint64, r redelivered, isNew bool) {
	s.recent[k] = r
	if isNew {
		s.size++
	}
	if len(s.recent) >= dupMergeAt {
		s.merge()
	}
}

// each calls fn with every entry in key order.
func (s *dupSet) each(fn func(k uint64, r redelivered)) {
	keys := make([]uint64, 0, len(s.recent))
	for k := range s.recent {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	j := 0
	flush := func(below uint64, all bool) {
		for ; j < len(keys) && (all || keys[j] < below); j++ {
			fn(keys[j], s.recent[keys[j]])
		}
	}
	if s.n > 0 {
		s.decode(dupMark{}, func(key uint64, r redelivered) bool {
			flush(key, false)
			if j < len(keys) && keys[j] == key {
				return true // changed since: the recent entry is the one
			}
			fn(key, r)
			return true
		})
	}
	flush(0, true)
}

// decode reads packed entries from mark m on while fn returns true.
func (s *dupSet) decode(m dupMark, fn func(k uint64, r redelivered) bool) {
	key, intended, p := m.prevKey, m.prevIntended, s.packed[m.offset:]
	for e := m.entry; e < s.n; e++ {
		dk, a := binary.Uvarint(p)
		di, b := binary.Varint(p[a:])
		extra, c := binary.Uvarint(p[a+b:])
		p = p[a+b+c:]
		key, intended = key+dk, intended+di
		if !fn(key, redelivered{intended: intended, extra: uint32(extra)}) {
			return
		}
	}
}

// merge packs the recent entries in with the packed ones.
func (s *dupSet) merge() {
	var out []byte
	var marks []dupMark
	var key uint64
	var intended int64
	n := 0
	s.each(func(k uint64, r redelivered) {
		if n%dupMarkEvery == 0 {
			marks = append(marks, dupMark{key: k, prevKey: key, prevIntended: intended, offset: len(out), entry: n})
		}
		out = binary.AppendUvarint(out, k-key)
		out = binary.AppendVarint(out, r.intended-intended)
		out = binary.AppendUvarint(out, uint64(r.extra))
		key, intended = k, r.intended
		n++
	})
	s.packed, s.marks, s.n = slices.Clip(out), slices.Clip(marks), n
	s.recent = map[uint64]redelivered{} // a new map: a merged one keeps its buckets
}
