package store

import (
	"sort"
	"strconv"
)

// Set is a set of strings. Like Redis 7.0 it starts as an "intset" (sorted integers) while every
// member is a canonical integer and there are at most IntsetMax members, and becomes a
// "hashtable" for good after that: OBJECT ENCODING and SMEMBERS's order follow from it.
type Set struct {
	ints []int64             // sorted; the members while IsIntset
	m    map[string]struct{} // the members once a hashtable
}

// NewSet returns an empty set, an intset.
func NewSet() *Set { return &Set{} }

// IsIntset reports whether the set is still intset-encoded.
func (s *Set) IsIntset() bool { return s.m == nil }

// Len is the number of members.
func (s *Set) Len() int {
	if s.m == nil {
		return len(s.ints)
	}
	return len(s.m)
}

// intsetMember parses b as Redis's string2ll does for intsets: a canonical decimal int64.
func intsetMember(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != string(b) {
		return 0, false
	}
	return n, true
}

func (s *Set) toHashtable() {
	s.m = make(map[string]struct{}, len(s.ints))
	for _, n := range s.ints {
		s.m[strconv.FormatInt(n, 10)] = struct{}{}
	}
	s.ints = nil
}

// Add adds member and reports whether it was new; intsetMax is set-max-intset-entries.
func (s *Set) Add(member []byte, intsetMax int) bool {
	if s.m == nil {
		if n, ok := intsetMember(member); ok {
			i := sort.Search(len(s.ints), func(i int) bool { return s.ints[i] >= n })
			if i < len(s.ints) && s.ints[i] == n {
				return false
			}
			s.ints = append(s.ints, 0)
			copy(s.ints[i+1:], s.ints[i:])
			s.ints[i] = n
			if len(s.ints) > intsetMax {
				s.toHashtable()
			}
			return true
		}
		s.toHashtable()
	}
	if _, ok := s.m[string(member)]; ok {
		return false
	}
	s.m[string(member)] = struct{}{}
	return true
}

// Has reports whether member is in the set.
func (s *Set) Has(member []byte) bool {
	if s.m == nil {
		n, ok := intsetMember(member)
		if !ok {
			return false
		}
		i := sort.Search(len(s.ints), func(i int) bool { return s.ints[i] >= n })
		return i < len(s.ints) && s.ints[i] == n
	}
	_, ok := s.m[string(member)]
	return ok
}

// Remove removes member and reports whether it was there.
func (s *Set) Remove(member []byte) bool {
	if s.m == nil {
		n, ok := intsetMember(member)
		if !ok {
			return false
		}
		i := sort.Search(len(s.ints), func(i int) bool { return s.ints[i] >= n })
		if i == len(s.ints) || s.ints[i] != n {
			return false
		}
		s.ints = append(s.ints[:i], s.ints[i+1:]...)
		return true
	}
	if _, ok := s.m[string(member)]; !ok {
		return false
	}
	delete(s.m, string(member))
	return true
}

// Members returns every member: ascending for an intset (as Redis), map order otherwise.
func (s *Set) Members() [][]byte {
	out := make([][]byte, 0, s.Len())
	if s.m == nil {
		for _, n := range s.ints {
			out = append(out, strconv.AppendInt(nil, n, 10))
		}
		return out
	}
	for k := range s.m {
		out = append(out, []byte(k))
	}
	return out
}

// Hash is a field-value map. Like Redis 7.0 it is a "listpack" (fields in insertion order)
// while it has at most hash-max-listpack-entries fields and no field or value longer than
// hash-max-listpack-value, and a "hashtable" for good after that.
type Hash struct {
	pairs [][2][]byte       // the fields while a listpack, in insertion order
	m     map[string][]byte // once a hashtable
}

// NewHash returns an empty hash, a listpack.
func NewHash() *Hash { return &Hash{} }

// IsListpack reports whether the hash is still listpack-encoded.
func (h *Hash) IsListpack() bool { return h.m == nil }

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.m == nil {
		return len(h.pairs)
	}
	return len(h.m)
}

// Get returns field's value, or nil and false.
func (h *Hash) Get(field []byte) ([]byte, bool) {
	if h.m == nil {
		for _, p := range h.pairs {
			if string(p[0]) == string(field) {
				return p[1], true
			}
		}
		return nil, false
	}
	v, ok := h.m[string(field)]
	return v, ok
}

// Set sets field to value (both kept, callers pass copies) and reports whether the field is
// new. maxEntries and maxValue are hash-max-listpack-entries and hash-max-listpack-value.
func (h *Hash) Set(field, value []byte, maxEntries, maxValue int) bool {
	if h.m == nil && (len(field) > maxValue || len(value) > maxValue) {
		h.toHashtable()
	}
	if h.m == nil {
		for i, p := range h.pairs {
			if string(p[0]) == string(field) {
				h.pairs[i][1] = value
				return false
			}
		}
		h.pairs = append(h.pairs, [2][]byte{field, value})
		if len(h.pairs) > maxEntries {
			h.toHashtable()
		}
		return true
	}
	_, had := h.m[string(field)]
	h.m[string(field)] = value
	return !had
}

func (h *Hash) toHashtable() {
	h.m = make(map[string][]byte, len(h.pairs))
	for _, p := range h.pairs {
		h.m[string(p[0])] = p[1]
	}
	h.pairs = nil
}

// Delete removes field and reports whether it was there.
func (h *Hash) Delete(field []byte) bool {
	if h.m == nil {
		for i, p := range h.pairs {
			if string(p[0]) == string(field) {
				h.pairs = append(h.pairs[:i], h.pairs[i+1:]...)
				return true
			}
		}
		return false
	}
	if _, ok := h.m[string(field)]; !ok {
		return false
	}
	delete(h.m, string(field))
	return true
}

// Each calls fn for every field in order (insertion order for a listpack).
func (h *Hash) Each(fn func(field, value []byte)) {
	if h.m == nil {
		for _, p := range h.pairs {
			fn(p[0], p[1])
		}
		return
	}
	for k, v := range h.m {
		fn([]byte(k), v)
	}
}

// Reencode gives a loaded set or hash the encoding Redis gives it when loading a snapshot: the
// compact one when its size fits the current limits (hashtable values converted back), else
// the hashtable. Other values are returned as they are.
func Reencode(v any, intsetMax, hashMaxEntries, hashMaxValue int) any {
	switch v := v.(type) {
	case *Set:
		if v.m == nil && len(v.ints) > intsetMax {
			v.toHashtable()
		}
		if v.m == nil || len(v.m) > intsetMax {
			return v
		}
		ns := NewSet()
		for k := range v.m {
			if _, ok := intsetMember([]byte(k)); !ok {
				return v
			}
		}
		for k := range v.m {
			ns.Add([]byte(k), intsetMax)
		}
		return ns
	case *Hash:
		if v.m == nil && len(v.pairs) > hashMaxEntries {
			v.toHashtable()
		}
		if v.m == nil || len(v.m) > hashMaxEntries {
			return v
		}
		for k, val := range v.m {
			if len(k) > hashMaxValue || len(val) > hashMaxValue {
				return v
			}
		}
		nh := NewHash()
		for k, val := range v.m {
			nh.Set([]byte(k), val, hashMaxEntries, hashMaxValue)
		}
		return nh
	}
	return v
}
