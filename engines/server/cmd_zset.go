package server

import (
	"math"
	"math/rand"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// Sorted sets (delayed and scheduled jobs), as Redis 7.0.15's t_zset.c.
var zsetCommands = []*command{
	{name: "zadd", arity: -4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Add one or more members to a sorted set, or update its score if it already exists", h: cmdZadd(false)},
	{name: "zincrby", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Increment the score of a member in a sorted set", h: cmdZadd(true)},
	{name: "zrem", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Remove one or more members from a sorted set", h: cmdZrem},
	{name: "zcard", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Get the number of members in a sorted set", h: cmdZcard},
	{name: "zscore", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Get the score associated with the given member in a sorted set", h: cmdZscore},
	{name: "zmscore", arity: -3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Get the score associated with the given members in a sorted set", h: cmdZmscore},
	{name: "zrank", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Determine the index of a member in a sorted set", h: cmdZrank(false)},
	{name: "zrevrank", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Determine the index of a member in a sorted set, with scores ordered from high to low", h: cmdZrank(true)},
	{name: "zcount", arity: 4, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Count the members in a sorted set with scores within the given values", h: zcountBy(parseScoreRange, (*store.Zset).CountByScore)},
	{name: "zlexcount", arity: 4, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Count the number of members in a sorted set between a given lexicographical range", h: zcountBy(parseLexRange, (*store.Zset).CountByLex)},
	{name: "zrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Return a range of members in a sorted set", h: cmdZrange(rangeAuto, dirAuto)},
	{name: "zrangebyscore", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Return a range of members in a sorted set, by score", h: cmdZrange(rangeScore, dirForward)},
	{name: "zrevrangebyscore", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Return a range of members in a sorted set, by score, with scores ordered from high to low", h: cmdZrange(rangeScore, dirReverse)},
	{name: "zrevrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Return a range of members in a sorted set, by index, with scores ordered from high to low", h: cmdZrange(rangeRank, dirReverse)},
	{name: "zrangebylex", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Return a range of members in a sorted set, by lexicographical range", h: cmdZrange(rangeLex, dirForward)},
	{name: "zrevrangebylex", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", h: cmdZrange(rangeLex, dirReverse)},
	{name: "zpopmin", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Remove and return members with the lowest scores in a sorted set", h: cmdZpop(false)},
	{name: "zpopmax", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Remove and return members with the highest scores in a sorted set", h: cmdZpop(true)},
	{name: "bzpopmin", arity: -3, flags: flagWrite | flagNoScript | flagFast | flagBlocking, firstKey: 1, lastKey: -2, step: 1, group: "sorted_set", summary: "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", h: cmdBzpop(false)},
	{name: "bzpopmax", arity: -3, flags: flagWrite | flagNoScript | flagFast | flagBlocking, firstKey: 1, lastKey: -2, step: 1, group: "sorted_set", summary: "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", h: cmdBzpop(true)},
	{name: "zmpop", arity: -4, flags: flagWrite, group: "sorted_set", summary: "Remove and return members with scores in a sorted set", h: cmdZmpop},
	{name: "bzmpop", arity: -5, flags: flagWrite | flagBlocking, group: "sorted_set", summary: "Remove and return members with scores in a sorted set or block until one is available", h: cmdBzmpop},
	{name: "zremrangebyscore", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Remove all members in a sorted set within the given scores", h: cmdZremrange(rangeScore)},
	{name: "zremrangebyrank", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Remove all members in a sorted set within the given indexes", h: cmdZremrange(rangeRank)},
	{name: "zremrangebylex", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Remove all members in a sorted set between the given lexicographical range", h: cmdZremrange(rangeLex)},
	{name: "zrandmember", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "sorted_set", summary: "Get one or multiple random elements from a sorted set", h: cmdZrandmember},
}

var (
	errZscoreNaN     = redisError("ERR resulting score is not a number (NaN)")
	errZrangeFloat   = redisError("ERR min or max is not a float")
	errZrangeLex     = redisError("ERR min or max not valid string range item")
	errZaddNXXX      = redisError("ERR XX and NX options at the same time are not compatible")
	errZaddGTLTNX    = redisError("ERR GT, LT, and/or NX options at the same time are not compatible")
	errZaddIncrPairs = redisError("ERR INCR option supports a single increment-element pair")
)

// getZset returns the zset at key, nil if missing, or WRONGTYPE.
func (c *client) getZset(key []byte) (*store.Zset, error) {
	v := c.keyspace().GetBytes(key)
	if v == nil {
		return nil, nil
	}
	z, ok := v.(*store.Zset)
	if !ok {
		return nil, errWrongType
	}
	return z, nil
}

// zaddFlags are ZADD's options.
type zaddFlags struct{ nx, xx, gt, lt, ch, incr bool }

func cmdZadd(zincrby bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		var f zaddFlags
		f.incr = zincrby
		i := 2
	opts:
		for ; i < len(args); i++ {
			switch {
			case eq(args[i], "nx"):
				f.nx = true
			case eq(args[i], "xx"):
				f.xx = true
			case eq(args[i], "gt"):
				f.gt = true
			case eq(args[i], "lt"):
				f.lt = true
			case eq(args[i], "ch"):
				f.ch = true
			case eq(args[i], "incr"):
				f.incr = true
			default:
				break opts
			}
		}
		elements := len(args) - i
		if elements%2 != 0 || elements == 0 {
			return nil, errSyntax
		}
		elements /= 2
		switch {
		case f.nx && f.xx:
			return nil, errZaddNXXX
		case f.gt && f.nx, f.lt && f.nx, f.gt && f.lt:
			return nil, errZaddGTLTNX
		case f.incr && elements > 1:
			return nil, errZaddIncrPairs
		}
		scores := make([]float64, elements)
		maxLen := 0
		for j := range scores {
			s, ok := parseFloat(args[i+2*j])
			if !ok {
				return nil, errNotFloat
			}
			scores[j] = s
			maxLen = max(maxLen, len(args[i+2*j+1]))
		}
		z, err := c.getZset(args[1])
		if err != nil {
			return nil, err
		}
		key := args[1]
		st := c.s.conf
		var added, updated, processed int
		var score float64
		if z == nil && !f.xx {
			// zsetTypeCreate: the encoding is chosen from the command's size.
			z = store.NewZset(elements <= st.zsetMaxListpackEntries && maxLen <= st.zsetMaxListpackValue && st.zsetMaxListpackEntries > 0)
			c.keyspace().Set(string(key), z)
			c.keyAdded(key)
			c.s.signalKeyBytes(c.db, key)
		}
		var nanErr error
		for j := 0; z != nil && j < elements; j++ {
			m := args[i+2*j+1]
			s := scores[j]
			cur, exists := z.Score(m)
			switch {
			case exists:
				if f.nx {
					continue
				}
				if f.incr {
					s += cur
					if math.IsNaN(s) {
						nanErr = errZscoreNaN
					}
				}
				if nanErr != nil || (f.lt && s >= cur) || (f.gt && s <= cur) {
					break
				}
				score = s
				processed++
				if s != cur {
					z.Set(m, s, st.zsetMaxListpackEntries, st.zsetMaxListpackValue)
					updated++
				}
			case !f.xx:
				z.Set(clone(m), s, st.zsetMaxListpackEntries, st.zsetMaxListpackValue)
				score = s
				added++
				processed++
			}
			if nanErr != nil {
				break
			}
		}
		if added > 0 || updated > 0 {
			c.touch(key)
			ev := "zadd"
			if f.incr {
				ev = "zincr"
			}
			c.notify(notifyZset, ev, key)
		}
		if nanErr != nil {
			return nil, nanErr
		}
		if f.incr {
			if processed > 0 {
				return resp.Double(score), nil
			}
			return nil, nil
		}
		if f.ch {
			return added + updated, nil
		}
		return added, nil
	}
}

func cmdZrem(c *client, args [][]byte) (any, error) {
	z, err := c.getZset(args[1])
	if err != nil || z == nil {
		return 0, err
	}
	deleted := 0
	for _, m := range args[2:] {
		if z.Remove(m) {
			deleted++
		}
		if z.Len() == 0 {
			break
		}
	}
	if deleted > 0 {
		c.notify(notifyZset, "zrem", args[1])
		c.emptied(args[1], z.Len())
		c.touch(args[1])
	}
	return deleted, nil
}

func cmdZcard(c *client, args [][]byte) (any, error) {
	z, err := c.getZset(args[1])
	if err != nil || z == nil {
		return 0, err
	}
	return z.Len(), nil
}

func cmdZscore(c *client, args [][]byte) (any, error) {
	z, err := c.getZset(args[1])
	if err != nil || z == nil {
		return nil, err
	}
	if s, ok := z.Score(args[2]); ok {
		return resp.Double(s), nil
	}
	return nil, nil
}

func cmdZmscore(c *client, args [][]byte) (any, error) {
	z, err := c.getZset(args[1])
	if err != nil {
		return nil, err
	}
	out := make(resp.Array, len(args)-2)
	for i, m := range args[2:] {
		if z == nil {
			continue
		}
		if s, ok := z.Score(m); ok {
			out[i] = resp.Double(s)
		}
	}
	return out, nil
}

func cmdZrank(rev bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		z, err := c.getZset(args[1])
		if err != nil || z == nil {
			return nil, err
		}
		r, ok := z.Rank(args[2])
		if !ok {
			return nil, nil
		}
		if rev {
			r = z.Len() - 1 - r
		}
		return r, nil
	}
}

// parseScoreBound parses one end of a score range: a float, "(" before it for exclusive
// (zslParseRangeItem; strtod also takes leading spaces, which parseFloat refuses).
func parseScoreBound(b []byte) (float64, bool, bool) {
	ex := len(b) > 0 && b[0] == '('
	if ex {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, ex, true // strtod of "" is 0 and stops at the end: Redis accepts it
	}
	f, ok := parseFloat(b)
	return f, ex, ok
}

func parseScoreRange(min, max []byte) (store.ScoreRange, error) {
	var r store.ScoreRange
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = parseScoreBound(min)
	r.Max, r.MaxEx, ok2 = parseScoreBound(max)
	if !ok1 || !ok2 {
		return r, errZrangeFloat
	}
	return r, nil
}

func parseLexBound(b []byte) (store.LexBound, bool) {
	switch {
	case len(b) == 1 && b[0] == '+':
		return store.LexBound{Inf: 1}, true
	case len(b) == 1 && b[0] == '-':
		return store.LexBound{Inf: -1}, true
	case len(b) > 0 && b[0] == '(':
		return store.LexBound{Value: b[1:], Ex: true}, true
	case len(b) > 0 && b[0] == '[':
		return store.LexBound{Value: b[1:]}, true
	}
	return store.LexBound{}, false
}

func parseLexRange(min, max []byte) (store.LexRange, error) {
	var r store.LexRange
	var ok1, ok2 bool
	r.Min, ok1 = parseLexBound(min)
	r.Max, ok2 = parseLexBound(max)
	if !ok1 || !ok2 {
		return r, errZrangeLex
	}
	return r, nil
}

// zcountBy is ZCOUNT (parseScoreRange, CountByScore) and ZLEXCOUNT (parseLexRange,
// CountByLex). The range is parsed before the key is looked up: a bad range is an error even
// for a missing key, as in Redis.
func zcountBy[R any](parse func(min, max []byte) (R, error), count func(z *store.Zset, r R) int) handler {
	return func(c *client, args [][]byte) (any, error) {
		r, err := parse(args[2], args[3])
		if err != nil {
			return nil, err
		}
		z, err := c.getZset(args[1])
		if err != nil || z == nil {
			return 0, err
		}
		return count(z, r), nil
	}
}

// zrange is a parsed range of one kind (rank, score or lex), as ZRANGE and ZREMRANGE* take it.
type zrange struct {
	kind       rangeKind
	start, end int64
	score      store.ScoreRange
	lex        store.LexRange
}

// parseZrange parses min and max as a range of kind (rangeRank, rangeScore or rangeLex).
func parseZrange(kind rangeKind, min, max []byte) (zrange, error) {
	r := zrange{kind: kind}
	var err error
	switch kind {
	case rangeRank:
		var ok1, ok2 bool
		r.start, ok1 = parseInt(min)
		r.end, ok2 = parseInt(max)
		if !ok1 || !ok2 {
			return r, errNotInteger
		}
	case rangeScore:
		r.score, err = parseScoreRange(min, max)
	case rangeLex:
		r.lex, err = parseLexRange(min, max)
	}
	return r, err
}

// ranked returns the entries of a rank range (none when it selects none).
func (r zrange) ranked(z *store.Zset, rev bool) []store.Entry {
	if a, b, ok := rankBounds(r.start, r.end, z.Len()); ok {
		return z.Entries(a, b, rev)
	}
	return nil
}

// each calls fn for the members of a score or lex range from offset on, until fn returns false.
func (r zrange) each(z *store.Zset, rev bool, offset int, fn func(member []byte, score float64) bool) {
	if r.kind == rangeScore {
		z.RangeByScore(r.score, rev, offset, fn)
	} else {
		z.RangeByLex(r.lex, rev, offset, fn)
	}
}

// The range kinds and directions of zrangeGenericCommand; auto means ZRANGE's options decide.
type rangeKind int

const (
	rangeAuto rangeKind = iota
	rangeRank
	rangeScore
	rangeLex
)

type rangeDir int

const (
	dirAuto rangeDir = iota
	dirForward
	dirReverse
)

// rankBounds turns start/stop indexes (negative from the end) into 0-based ranks, ok false if
// the range is empty (as genericZrangebyrankCommand and ZREMRANGEBYRANK sanitise them).
func rankBounds(start, end int64, n int) (int, int, bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= ln {
		return 0, 0, false
	}
	if end >= ln {
		end = ln - 1
	}
	return int(start), int(end), true
}

// zrangeReply collects members, with their scores if withScores: flat in RESP2, [member,
// score] pairs in RESP3 (zrangeResultEmitCBufferToClient).
type zrangeReply struct {
	withScores bool
	items      []store.Entry
}

func (r *zrangeReply) AppendRESP(b []byte, proto int) []byte {
	if !r.withScores {
		b = resp.AppendArrayLen(b, len(r.items))
		for _, e := range r.items {
			b = resp.AppendBulk(b, e.Member)
		}
		return b
	}
	if proto >= 3 {
		b = resp.AppendArrayLen(b, len(r.items))
		for _, e := range r.items {
			b = resp.AppendArrayLen(b, 2)
			b = resp.AppendBulk(b, e.Member)
			b = resp.AppendValue(b, resp.Double(e.Score), proto)
		}
		return b
	}
	b = resp.AppendArrayLen(b, 2*len(r.items))
	for _, e := range r.items {
		b = resp.AppendBulk(b, e.Member)
		b = resp.AppendValue(b, resp.Double(e.Score), proto)
	}
	return b
}

func cmdZrange(kindArg rangeKind, dirArg rangeDir) handler {
	return func(c *client, args [][]byte) (any, error) {
		kind, dir := kindArg, dirArg // the options may set them: per call
		withScores := false
		offset, limit := int64(0), int64(-1)
		for j := 4; j < len(args); j++ {
			left := len(args) - j - 1
			switch {
			case eq(args[j], "withscores"):
				withScores = true
			case eq(args[j], "limit") && left >= 2:
				o, ok1 := parseInt(args[j+1])
				if !ok1 {
					return nil, errNotInteger
				}
				l, ok2 := parseInt(args[j+2])
				if !ok2 {
					return nil, errNotInteger
				}
				offset, limit = o, l
				j += 2
			case dir == dirAuto && eq(args[j], "rev"):
				dir = dirReverse
			case kind == rangeAuto && eq(args[j], "bylex"):
				kind = rangeLex
			case kind == rangeAuto && eq(args[j], "byscore"):
				kind = rangeScore
			default:
				return nil, errSyntax
			}
		}
		if dir == dirAuto {
			dir = dirForward
		}
		if kind == rangeAuto {
			kind = rangeRank
		}
		if limit != -1 && kind == rangeRank {
			return nil, redisError("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		}
		if withScores && kind == rangeLex {
			return nil, redisError("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		}
		rev := dir == dirReverse
		minArg, maxArg := args[2], args[3]
		if rev && kind != rangeRank {
			minArg, maxArg = maxArg, minArg // given as max, min
		}
		r, err := parseZrange(kind, minArg, maxArg)
		if err != nil {
			return nil, err
		}
		z, err := c.getZset(args[1])
		if err != nil {
			return nil, err
		}
		out := &zrangeReply{withScores: withScores}
		if z == nil {
			return out, nil
		}
		if kind == rangeRank {
			out.items = r.ranked(z, rev)
			return out, nil
		}
		// A negative offset skips everything (Redis's "while (offset--)" runs off the end).
		if offset < 0 || limit == 0 || offset >= int64(z.Len()) && offset > 0 {
			return out, nil
		}
		r.each(z, rev, int(offset), func(m []byte, s float64) bool {
			out.items = append(out.items, store.Entry{Member: m, Score: s})
			limit--
			return limit != 0 // a negative limit never reaches 0: no limit
		})
		return out, nil
	}
}

// popReply is ZPOPMIN/ZPOPMAX's and BZPOPMIN/BZPOPMAX's reply: [key,] member, score, ... flat,
// or [member, score] pairs when nested (ZPOPMIN with a count in RESP3).
type popReply struct {
	key    []byte
	items  []store.Entry
	nested bool
}

func (r *popReply) AppendRESP(b []byte, proto int) []byte {
	nested := r.nested && proto >= 3
	n := len(r.items)
	if !nested {
		n *= 2
	}
	if r.key != nil {
		n++
	}
	b = resp.AppendArrayLen(b, n)
	if r.key != nil {
		b = resp.AppendBulk(b, r.key)
	}
	for _, e := range r.items {
		if nested {
			b = resp.AppendArrayLen(b, 2)
		}
		b = resp.AppendBulk(b, e.Member)
		b = resp.AppendValue(b, resp.Double(e.Score), proto)
	}
	return b
}

// zpop removes up to count members from the low (or high, if max) end of z at key, with
// Redis's events (genericZpopCommand).
func (c *client) zpop(key []byte, z *store.Zset, max bool, count int64) []store.Entry {
	n := int(min(count, int64(z.Len())))
	items := z.Entries(0, n-1, max)
	for _, e := range items {
		z.Remove(e.Member)
	}
	ev := "zpopmin"
	if max {
		ev = "zpopmax"
	}
	c.notify(notifyZset, ev, key)
	c.emptied(key, z.Len())
	c.touch(key)
	return items
}

func cmdZpop(max bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		if len(args) > 3 {
			return nil, errSyntax
		}
		count := int64(-1)
		if len(args) == 3 {
			n, ok := parseInt(args[2])
			if !ok || n < 0 {
				return nil, errOutOfRange
			}
			count = n
		}
		out := &popReply{nested: count != -1}
		z, err := c.getZset(args[1])
		if err != nil || z == nil || count == 0 {
			return out, err
		}
		out.items = c.zpop(args[1], z, max, max1(count))
		return out, nil
	}
}

// max1 turns the "no count" -1 into one element.
func max1(count int64) int64 {
	if count < 1 {
		return 1
	}
	return count
}

// tryZpopKeys pops one member from the first non-empty zset among keys.
func (c *client) tryZpopKeys(keys [][]byte, max bool) (any, error) {
	for _, k := range keys {
		z, err := c.getZset(k)
		if err != nil {
			return nil, err
		}
		if z == nil || z.Len() == 0 {
			continue
		}
		items := c.zpop(k, z, max, 1)
		pop := "ZPOPMIN"
		if max {
			pop = "ZPOPMAX"
		}
		c.logAs = [][]byte{[]byte(pop), clone(k)} // Redis propagates it as ZPOP[MIN|MAX] key
		return &popReply{key: clone(k), items: items}, nil
	}
	return nil, nil
}

func cmdBzpop(max bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		ready := func(key []byte) bool {
			z, err := c.getZset(key)
			return err == nil && z != nil && z.Len() > 0
		}
		pop := func(keys [][]byte) (any, error) { return c.tryZpopKeys(keys, max) }
		return c.blockingPopKeys(args[1:len(args)-1], args[len(args)-1], ready, pop)
	}
}

func cmdZremrange(kind rangeKind) handler {
	return func(c *client, args [][]byte) (any, error) {
		r, err := parseZrange(kind, args[2], args[3])
		if err != nil {
			return nil, err
		}
		z, err := c.getZset(args[1])
		if err != nil || z == nil {
			return 0, err
		}
		var victims []store.Entry
		if kind == rangeRank {
			victims = r.ranked(z, false)
		} else {
			r.each(z, false, 0, func(m []byte, s float64) bool {
				victims = append(victims, store.Entry{Member: m, Score: s})
				return true
			})
		}
		ev := "zremrangebyrank"
		switch kind {
		case rangeScore:
			ev = "zremrangebyscore"
		case rangeLex:
			ev = "zremrangebylex"
		}
		for _, e := range victims {
			z.Remove(e.Member)
		}
		if len(victims) > 0 {
			c.touch(args[1])
			c.notify(notifyZset, ev, args[1])
			c.emptied(args[1], z.Len())
		}
		return len(victims), nil
	}
}

func cmdZrandmember(c *client, args [][]byte) (any, error) {
	if len(args) == 2 {
		z, err := c.getZset(args[1])
		if err != nil || z == nil {
			return nil, err
		}
		return z.Random().Member, nil
	}
	n, ok := parseInt(args[2])
	if !ok {
		return nil, errNotInteger
	}
	if n < -math.MaxInt64 {
		return nil, errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, int64(math.MaxInt64))
	}
	withScores := false
	if len(args) > 4 || (len(args) == 4 && !eq(args[3], "withscores")) {
		return nil, errSyntax
	} else if len(args) == 4 {
		withScores = true
		if n < -math.MaxInt64/2 || n > math.MaxInt64/2 {
			return nil, redisError("ERR value is out of range")
		}
	}
	z, err := c.getZset(args[1])
	if err != nil {
		return nil, err
	}
	out := &zrangeReply{withScores: withScores}
	if z == nil || n == 0 {
		return out, nil
	}
	switch {
	case n < 0: // repetitions allowed
		if -n > maxRandomReply {
			// Redis would build the reply until memory runs out; refuse instead.
			return nil, errorf("ERR value is out of range, value must between %d and %d", -maxRandomReply, int64(math.MaxInt64))
		}
		for i := int64(0); i < -n; i++ {
			out.items = append(out.items, z.Random())
		}
	case n >= int64(z.Len()): // the whole zset, highest first (Redis's zset iterator runs from the tail)
		out.items = z.Entries(0, z.Len()-1, true)
	default: // distinct members, in random order
		all := z.Entries(0, z.Len()-1, false)
		rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		out.items = all[:n]
	}
	return out, nil
}

// zsetEncoding is OBJECT ENCODING's answer for a zset.
func zsetEncoding(z *store.Zset) string {
	if z.IsListpack() {
		return "listpack"
	}
	return "skiplist"
}
