package store

import (
	"math/rand"
)

// Zset is a sorted set: members ordered by (score, member bytes), as Redis 7.0's. It is one
// structure whatever the encoding, a skiplist with spans (O(log n) insert, delete and rank, as
// t_zset.c's zskiplist) plus a map member -> score; listpack only records which encoding Redis
// would have chosen (OBJECT ENCODING): a zset starts as a listpack when created small, and
// becomes a skiplist for good once it has more than zset-max-listpack-entries members or a
// member longer than zset-max-listpack-value (zsetAdd's conversion; 7.0 never converts back
// outside ZUNIONSTORE-like commands, which this server does not have).
type Zset struct {
	head     *zslNode
	tail     *zslNode
	level    int
	length   int
	dict     map[string]float64
	listpack bool
}

const zslMaxLevel = 32

type zslLevel struct {
	forward *zslNode
	span    int
}

type zslNode struct {
	member   string
	score    float64
	backward *zslNode
	level    []zslLevel
}

// NewZset returns an empty zset; listpack is the encoding it starts with (Redis's
// zsetTypeCreate picks it from the size of the command creating it).
func NewZset(listpack bool) *Zset {
	return &Zset{head: &zslNode{level: make([]zslLevel, zslMaxLevel)}, level: 1, dict: map[string]float64{}, listpack: listpack}
}

// IsListpack reports whether Redis would have the zset listpack-encoded.
func (z *Zset) IsListpack() bool { return z.listpack }

// Len is the number of members.
func (z *Zset) Len() int { return z.length }

// Score returns member's score.
func (z *Zset) Score(member []byte) (float64, bool) {
	s, ok := z.dict[string(member)]
	return s, ok
}

// less orders (score, member) pairs as Redis: by score, then by member bytes.
func less(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || (s1 == s2 && m1 < m2)
}

func randomLevel() int {
	l := 1
	for l < zslMaxLevel && rand.Intn(4) == 0 { // ZSKIPLIST_P = 0.25
		l++
	}
	return l
}

// Set sets member's score, adding it if new, and reports whether it was new. maxEntries and
// maxValue are zset-max-listpack-entries and zset-max-listpack-value.
func (z *Zset) Set(member []byte, score float64, maxEntries, maxValue int) bool {
	if score == 0 && z.listpack {
		score = 0 // a listpack stores scores as text and integers: -0 reads back as 0
	}
	if old, ok := z.dict[string(member)]; ok {
		if old != score {
			z.delete(old, string(member))
			z.insert(score, string(member))
			z.dict[string(member)] = score
		}
		return false
	}
	if z.listpack && (z.length+1 > maxEntries || len(member) > maxValue) {
		z.listpack = false
	}
	m := string(member)
	z.insert(score, m)
	z.dict[m] = score
	return true
}

// Remove deletes member and reports whether it was there.
func (z *Zset) Remove(member []byte) bool {
	s, ok := z.dict[string(member)]
	if !ok {
		return false
	}
	z.delete(s, string(member))
	delete(z.dict, string(member))
	return true
}

func (z *Zset) insert(score float64, member string) {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		if i < z.level-1 {
			rank[i] = rank[i+1]
		}
		for x.level[i].forward != nil && less(x.level[i].forward.score, x.level[i].forward.member, score, member) {
			rank[i] += x.level[i].span
			x = x.level[i].forward
		}
		update[i] = x
	}
	lvl := randomLevel()
	if lvl > z.level {
		for i := z.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = z.head
			update[i].level[i].span = z.length
		}
		z.level = lvl
	}
	n := &zslNode{member: member, score: score, level: make([]zslLevel, lvl)}
	for i := 0; i < lvl; i++ {
		n.level[i].forward = update[i].level[i].forward
		update[i].level[i].forward = n
		n.level[i].span = update[i].level[i].span - (rank[0] - rank[i])
		update[i].level[i].span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < z.level; i++ {
		update[i].level[i].span++
	}
	if update[0] != z.head {
		n.backward = update[0]
	}
	if n.level[0].forward != nil {
		n.level[0].forward.backward = n
	} else {
		z.tail = n
	}
	z.length++
}

func (z *Zset) delete(score float64, member string) {
	var update [zslMaxLevel]*zslNode
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && less(x.level[i].forward.score, x.level[i].forward.member, score, member) {
			x = x.level[i].forward
		}
		update[i] = x
	}
	x = x.level[0].forward
	if x == nil || x.score != score || x.member != member {
		return
	}
	z.unlink(x, &update)
}

func (z *Zset) unlink(x *zslNode, update *[zslMaxLevel]*zslNode) {
	for i := 0; i < z.level; i++ {
		if update[i].level[i].forward == x {
			update[i].level[i].span += x.level[i].span - 1
			update[i].level[i].forward = x.level[i].forward
		} else {
			update[i].level[i].span--
		}
	}
	if x.level[0].forward != nil {
		x.level[0].forward.backward = x.backward
	} else {
		z.tail = x.backward
	}
	for z.level > 1 && z.head.level[z.level-1].forward == nil {
		z.level--
	}
	z.length--
}

// Rank is member's 0-based rank in ascending order.
func (z *Zset) Rank(member []byte) (int, bool) {
	score, ok := z.dict[string(member)]
	if !ok {
		return 0, false
	}
	m := string(member)
	rank := 0
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && !less(score, m, x.level[i].forward.score, x.level[i].forward.member) {
			rank += x.level[i].span
			x = x.level[i].forward
		}
		if x != z.head && x.member == m {
			return rank - 1, true
		}
	}
	return 0, false
}

// byRank is the node at 0-based rank r (0 <= r < Len).
func (z *Zset) byRank(r int) *zslNode {
	r++ // spans count from the head
	traversed := 0
	x := z.head
	for i := z.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && traversed+x.level[i].span <= r {
			traversed += x.level[i].span
			x = x.level[i].forward
		}
		if traversed == r {
			return x
		}
	}
	return nil
}

// Entry is one member and its score.
type Entry struct {
	Member []byte
	Score  float64
}

// Range calls fn for ranks start..stop (0 <= start <= stop < Len) in ascending order, or
// descending ranks counted from the top if rev, until fn returns false.
func (z *Zset) Range(start, stop int, rev bool, fn func(member []byte, score float64) bool) {
	if start > stop || start >= z.length {
		return
	}
	var x *zslNode
	if rev {
		x = z.byRank(z.length - 1 - start)
	} else {
		x = z.byRank(start)
	}
	for i := start; i <= stop && x != nil; i++ {
		if !fn([]byte(x.member), x.score) {
			return
		}
		if rev {
			x = x.backward
		} else {
			x = x.level[0].forward
		}
	}
}

// ScoreRange is a score interval; Min/Max exclusive if MinEx/MaxEx (Redis's zrangespec).
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

func (r *ScoreRange) gteMin(s float64) bool {
	if r.MinEx {
		return s > r.Min
	}
	return s >= r.Min
}

func (r *ScoreRange) lteMax(s float64) bool {
	if r.MaxEx {
		return s < r.Max
	}
	return s <= r.Max
}

// Empty reports whether no score can be in the range (zslIsInRange's first test).
func (r *ScoreRange) Empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// LexBound is one end of a lexicographic range: Inf -1 is "-", +1 is "+", else Value with Ex.
type LexBound struct {
	Value []byte
	Ex    bool
	Inf   int
}

// LexRange is a member interval for zsets whose members share one score (Redis's zlexrangespec).
type LexRange struct{ Min, Max LexBound }

func (r *LexRange) gteMin(m string) bool {
	switch r.Min.Inf {
	case -1:
		return true
	case 1:
		return false
	}
	if r.Min.Ex {
		return m > string(r.Min.Value)
	}
	return m >= string(r.Min.Value)
}

func (r *LexRange) lteMax(m string) bool {
	switch r.Max.Inf {
	case 1:
		return true
	case -1:
		return false
	}
	if r.Max.Ex {
		return m < string(r.Max.Value)
	}
	return m <= string(r.Max.Value)
}

// Empty reports whether no member can be in the range (zslIsInLexRange's first test).
func (r *LexRange) Empty() bool {
	if r.Min.Inf == 1 || r.Max.Inf == -1 {
		return true
	}
	if r.Min.Inf == -1 || r.Max.Inf == 1 {
		return false
	}
	c := string(r.Min.Value)
	d := string(r.Max.Value)
	return c > d || (c == d && (r.Min.Ex || r.Max.Ex))
}

// nodeRange is what the range walks need from a ScoreRange or a LexRange: both walk the same
// skiplist and differ only in which field of a node they compare.
type nodeRange interface {
	Empty() bool
	nodeGteMin(x *zslNode) bool
	nodeLteMax(x *zslNode) bool
}

func (r *ScoreRange) nodeGteMin(x *zslNode) bool { return r.gteMin(x.score) }
func (r *ScoreRange) nodeLteMax(x *zslNode) bool { return r.lteMax(x.score) }
func (r *LexRange) nodeGteMin(x *zslNode) bool   { return r.gteMin(x.member) }
func (r *LexRange) nodeLteMax(x *zslNode) bool   { return r.lteMax(x.member) }

// rangeStart is the first node >= the range's min (or the last <= max if rev), or nil.
func (z *Zset) rangeStart(r nodeRange, rev bool) *zslNode {
	x := z.head
	if !rev {
		for i := z.level - 1; i >= 0; i-- {
			for x.level[i].forward != nil && !r.nodeGteMin(x.level[i].forward) {
				x = x.level[i].forward
			}
		}
		return x.level[0].forward
	}
	for i := z.level - 1; i >= 0; i-- {
		for x.level[i].forward != nil && r.nodeLteMax(x.level[i].forward) {
			x = x.level[i].forward
		}
	}
	if x == z.head {
		return nil
	}
	return x
}

// RangeByScore calls fn for members in r, ascending (descending if rev), skipping offset of
// them first, until fn returns false.
func (z *Zset) RangeByScore(r ScoreRange, rev bool, offset int, fn func(member []byte, score float64) bool) {
	z.rangeBy(&r, rev, offset, fn)
}

// RangeByLex is RangeByScore for a member range.
func (z *Zset) RangeByLex(r LexRange, rev bool, offset int, fn func(member []byte, score float64) bool) {
	z.rangeBy(&r, rev, offset, fn)
}

func (z *Zset) rangeBy(r nodeRange, rev bool, offset int, fn func(member []byte, score float64) bool) {
	if r.Empty() {
		return
	}
	x := z.rangeStart(r, rev)
	for ; x != nil; x = step(x, rev) {
		if rev && !r.nodeGteMin(x) || !rev && !r.nodeLteMax(x) {
			return
		}
		if offset > 0 {
			offset--
			continue
		}
		if !fn([]byte(x.member), x.score) {
			return
		}
	}
}

func step(x *zslNode, rev bool) *zslNode {
	if rev {
		return x.backward
	}
	return x.level[0].forward
}

// CountByScore is the number of members in r, from ranks (O(log n)).
func (z *Zset) CountByScore(r ScoreRange) int { return z.countBy(&r) }

// CountByLex is CountByScore for a member range.
func (z *Zset) CountByLex(r LexRange) int { return z.countBy(&r) }

func (z *Zset) countBy(r nodeRange) int {
	if r.Empty() {
		return 0
	}
	first := z.rangeStart(r, false)
	if first == nil || !r.nodeLteMax(first) {
		return 0
	}
	last := z.rangeStart(r, true)
	a, _ := z.Rank([]byte(first.member))
	b, _ := z.Rank([]byte(last.member))
	return b - a + 1
}

// Entries returns ranks start..stop as entries (see Range).
func (z *Zset) Entries(start, stop int, rev bool) []Entry {
	var out []Entry
	z.Range(start, stop, rev, func(m []byte, s float64) bool {
		out = append(out, Entry{m, s})
		return true
	})
	return out
}

// Random returns a member chosen uniformly, from its rank (the zset must not be empty).
func (z *Zset) Random() Entry {
	x := z.byRank(rand.Intn(z.length))
	return Entry{[]byte(x.member), x.score}
}

// Reencode returns the zset with the encoding Redis's RDB load gives it by the current limits:
// a listpack when it fits (rebuilt, so -0 scores read 0 as in a listpack), else a skiplist.
func (z *Zset) Reencode(maxEntries, maxValue int) *Zset {
	fits := z.length <= maxEntries
	for m := range z.dict {
		if !fits {
			break
		}
		fits = len(m) <= maxValue
	}
	switch {
	case fits && !z.listpack:
		nz := NewZset(true)
		z.Range(0, z.length-1, false, func(m []byte, s float64) bool {
			nz.Set(m, s, 1<<62, 1<<62)
			return true
		})
		return nz
	case !fits:
		z.listpack = false
	}
	return z
}
