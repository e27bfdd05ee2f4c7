package server

import (
	"math"
	"math/rand"
	"strconv"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// Sets (deduplication) and hashes (job payloads), as Redis 7.0.15's t_set.c and t_hash.c.
var setHashCommands = []*command{
	{name: "sadd", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Add one or more members to a set", h: cmdSadd},
	{name: "srem", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Remove one or more members from a set", h: cmdSrem},
	{name: "smembers", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Get all the members in a set", h: cmdSmembers},
	{name: "sismember", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Determine if a given value is a member of a set", h: cmdSismember},
	{name: "scard", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Get the number of members in a set", h: cmdScard},
	{name: "srandmember", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Get one or multiple random members from a set", h: cmdSrandmember},
	{name: "spop", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Remove and return one or multiple random members from a set", h: cmdSpop},
	{name: "hset", arity: -4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Set the string value of a hash field", h: cmdHset(false)},
	{name: "hmset", arity: -4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Set multiple hash fields to multiple values", h: cmdHset(true)},
	{name: "hget", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get the value of a hash field", h: cmdHget},
	{name: "hgetall", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Get all the fields and values in a hash", h: cmdHgetall},
	{name: "hdel", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Delete one or more hash fields", h: cmdHdel},
	{name: "hincrby", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "hash", summary: "Increment the integer value of a hash field by the given number", h: cmdHincrby},
}

// maxRandomReply bounds SRANDMEMBER's negative count (a reply of that many members).
const maxRandomReply = 1 << 24

// getSet returns the set at key, nil if missing, or WRONGTYPE.
func (c *client) getSet(key []byte) (*store.Set, error) {
	v := c.keyspace().GetBytes(key)
	if v == nil {
		return nil, nil
	}
	s, ok := v.(*store.Set)
	if !ok {
		return nil, errWrongType
	}
	return s, nil
}

// getHash returns the hash at key, nil if missing, or WRONGTYPE.
func (c *client) getHash(key []byte) (*store.Hash, error) {
	v := c.keyspace().GetBytes(key)
	if v == nil {
		return nil, nil
	}
	h, ok := v.(*store.Hash)
	if !ok {
		return nil, errWrongType
	}
	return h, nil
}

// emptied deletes key once its set or hash is empty, with Redis's "del" event.
func (c *client) emptied(key []byte, n int) {
	if n == 0 {
		c.keyspace().Delete(string(key))
		c.notify(notifyGeneric, "del", key)
	}
}

func cmdSadd(c *client, args [][]byte) (any, error) {
	s, err := c.getSet(args[1])
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = store.NewSet()
		c.keyspace().Set(string(args[1]), s)
		c.keyAdded(args[1])
	}
	added := 0
	for _, m := range args[2:] {
		if s.Add(clone(m), c.s.conf.setMaxIntsetEntries) {
			added++
		}
	}
	if added > 0 {
		c.touch(args[1])
		c.notify(notifySet, "sadd", args[1])
	}
	return added, nil
}

func cmdSrem(c *client, args [][]byte) (any, error) {
	s, err := c.getSet(args[1])
	if err != nil || s == nil {
		return 0, err
	}
	removed := 0
	for _, m := range args[2:] {
		if s.Remove(m) {
			removed++
			if s.Len() == 0 {
				break // Redis stops at an emptied set
			}
		}
	}
	if removed > 0 {
		c.notify(notifySet, "srem", args[1])
		c.emptied(args[1], s.Len())
		c.touch(args[1])
	}
	return removed, nil
}

// members is a set reply: an array in RESP2, a set in RESP3.
func members(ms [][]byte) resp.Set {
	out := make(resp.Set, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

func cmdSmembers(c *client, args [][]byte) (any, error) {
	s, err := c.getSet(args[1])
	if err != nil {
		return nil, err
	}
	if s == nil {
		return resp.Set{}, nil
	}
	return members(s.Members()), nil
}

func cmdSismember(c *client, args [][]byte) (any, error) {
	s, err := c.getSet(args[1])
	if err != nil || s == nil {
		return 0, err
	}
	if s.Has(args[2]) {
		return 1, nil
	}
	return 0, nil
}

func cmdScard(c *client, args [][]byte) (any, error) {
	s, err := c.getSet(args[1])
	if err != nil || s == nil {
		return 0, err
	}
	return s.Len(), nil
}

func cmdSrandmember(c *client, args [][]byte) (any, error) {
	if len(args) > 3 {
		return nil, errSyntax
	}
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok {
			return nil, errNotInteger
		}
		if n < -math.MaxInt64 {
			return nil, errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, int64(math.MaxInt64))
		}
		s, err := c.getSet(args[1])
		if err != nil {
			return nil, err
		}
		if s == nil || n == 0 {
			return resp.Array{}, nil
		}
		ms := s.Members()
		if n < 0 && -n > maxRandomReply {
			// Redis would build the reply until memory runs out; refuse instead.
			return nil, errorf("ERR value is out of range, value must between %d and %d", -maxRandomReply, int64(math.MaxInt64))
		}
		if n < 0 { // repetitions allowed
			out := make(resp.Array, 0, min(-n, 1<<20))
			for i := int64(0); i < -n; i++ {
				out = append(out, ms[rand.Intn(len(ms))])
			}
			return out, nil
		}
		if n < int64(len(ms)) {
			rand.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
			ms = ms[:n]
		}
		out := make(resp.Array, len(ms))
		for i, m := range ms {
			out[i] = m
		}
		return out, nil
	}
	s, err := c.getSet(args[1])
	if err != nil || s == nil {
		return nil, err
	}
	ms := s.Members()
	return ms[rand.Intn(len(ms))], nil
}

func cmdSpop(c *client, args [][]byte) (any, error) {
	if len(args) > 3 {
		return nil, errSyntax
	}
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok || n < 0 {
			return nil, errOutOfRange
		}
		s, err := c.getSet(args[1])
		if err != nil {
			return nil, err
		}
		if s == nil || n == 0 {
			return resp.Set{}, nil
		}
		c.notify(notifySet, "spop", args[1])
		ms := s.Members()
		if n < int64(len(ms)) {
			rand.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
			ms = ms[:n]
		}
		c.logAs = [][]byte{[]byte("SREM"), clone(args[1])}
		for _, m := range ms {
			s.Remove(m)
			c.logAs = append(c.logAs, m)
		}
		c.emptied(args[1], s.Len())
		c.touch(args[1])
		return members(ms), nil
	}
	s, err := c.getSet(args[1])
	if err != nil || s == nil {
		return nil, err
	}
	ms := s.Members()
	m := ms[rand.Intn(len(ms))]
	s.Remove(m)
	c.logAs = [][]byte{[]byte("SREM"), clone(args[1]), m}
	c.notify(notifySet, "spop", args[1])
	c.emptied(args[1], s.Len())
	c.touch(args[1])
	return m, nil
}

func cmdHset(hmset bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		if len(args)%2 != 0 {
			return nil, errArity(lowerASCII(args[0]))
		}
		h, err := c.getHash(args[1])
		if err != nil {
			return nil, err
		}
		if h == nil {
			h = store.NewHash()
			c.keyspace().Set(string(args[1]), h)
			c.keyAdded(args[1])
		}
		st := c.s.conf
		created := 0
		for i := 2; i < len(args); i += 2 {
			if h.Set(clone(args[i]), clone(args[i+1]), st.hashMaxListpackEntries, st.hashMaxListpackValue) {
				created++
			}
		}
		c.touch(args[1])
		c.notify(notifyHash, "hset", args[1])
		if hmset {
			return resp.OK, nil
		}
		return created, nil
	}
}

func cmdHget(c *client, args [][]byte) (any, error) {
	h, err := c.getHash(args[1])
	if err != nil || h == nil {
		return nil, err
	}
	if v, ok := h.Get(args[2]); ok {
		return v, nil
	}
	return nil, nil
}

func cmdHgetall(c *client, args [][]byte) (any, error) {
	h, err := c.getHash(args[1])
	if err != nil {
		return nil, err
	}
	out := resp.Map{}
	if h != nil {
		h.Each(func(f, v []byte) { out = append(out, f, v) })
	}
	return out, nil
}

func cmdHdel(c *client, args [][]byte) (any, error) {
	h, err := c.getHash(args[1])
	if err != nil || h == nil {
		return 0, err
	}
	deleted := 0
	for _, f := range args[2:] {
		if h.Delete(f) {
			deleted++
			if h.Len() == 0 {
				break
			}
		}
	}
	if deleted > 0 {
		c.touch(args[1])
		c.notify(notifyHash, "hdel", args[1])
		c.emptied(args[1], h.Len())
	}
	return deleted, nil
}

func cmdHincrby(c *client, args [][]byte) (any, error) {
	incr, ok := parseInt(args[3])
	if !ok {
		return nil, errNotInteger
	}
	h, err := c.getHash(args[1])
	if err != nil {
		return nil, err
	}
	var cur int64
	if h != nil {
		if v, ok := h.Get(args[2]); ok {
			n, ok := parseInt(v)
			if !ok {
				return nil, redisError("ERR hash value is not an integer")
			}
			cur = n
		}
	}
	if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) || (incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
		return nil, redisError("ERR increment or decrement would overflow")
	}
	cur += incr
	if h == nil {
		h = store.NewHash()
		c.keyspace().Set(string(args[1]), h)
		c.keyAdded(args[1])
	}
	st := c.s.conf
	h.Set(clone(args[2]), strconv.AppendInt(nil, cur, 10), st.hashMaxListpackEntries, st.hashMaxListpackValue)
	c.touch(args[1])
	c.notify(notifyHash, "hincrby", args[1])
	return cur, nil
}
