package server

import (
	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// Set commands across keys (SMOVE, SINTER, SUNION, SDIFF and their STORE forms), SMISMEMBER
// and SSCAN, as Redis 7.0.15's t_set.c.
var setOpCommands = []*command{
	{name: "smove", arity: 4, flags: flagWrite | flagFast, firstKey: 1, lastKey: 2, step: 1, group: "set", summary: "Move a member from one set to another", h: cmdSmove},
	{name: "sinter", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: -1, step: 1, group: "set", summary: "Intersect multiple sets", h: cmdSetOp(setInter, false)},
	{name: "sinterstore", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 1, group: "set", summary: "Intersect multiple sets and store the resulting set in a key", h: cmdSetOp(setInter, true)},
	{name: "sintercard", arity: -3, flags: flagReadonly, group: "set", summary: "Intersect multiple sets and return the cardinality of the result", h: cmdSintercard},
	{name: "sunion", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: -1, step: 1, group: "set", summary: "Add multiple sets", h: cmdSetOp(setUnion, false)},
	{name: "sunionstore", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 1, group: "set", summary: "Add multiple sets and store the resulting set in a key", h: cmdSetOp(setUnion, true)},
	{name: "sdiff", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: -1, step: 1, group: "set", summary: "Subtract multiple sets", h: cmdSetOp(setDiff, false)},
	{name: "sdiffstore", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 1, group: "set", summary: "Subtract multiple sets and store the resulting set in a key", h: cmdSetOp(setDiff, true)},
	{name: "smismember", arity: -3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Returns the membership associated with the given elements for a set", h: cmdSmismember},
	{name: "sscan", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "set", summary: "Incrementally iterate Set elements", h: cmdSscan},
}

func cmdSmove(c *client, args [][]byte) (any, error) {
	src, err := c.getSet(args[1])
	if err != nil || src == nil {
		return 0, err
	}
	dst, err := c.getSet(args[2])
	if err != nil {
		return nil, err
	}
	member := args[3]
	if string(args[1]) == string(args[2]) {
		if src.Has(member) {
			return 1, nil
		}
		return 0, nil
	}
	if !src.Remove(member) {
		return 0, nil
	}
	c.notify(notifySet, "srem", args[1])
	c.emptied(args[1], src.Len())
	if dst == nil {
		dst = store.NewSet()
		c.keyspace().Set(string(args[2]), dst)
		c.keyAdded(args[2])
	}
	c.touch(args[1])
	if dst.Add(clone(member), c.s.conf.setMaxIntsetEntries) {
		c.touch(args[2])
		c.notify(notifySet, "sadd", args[2])
	}
	return 1, nil
}

type setOp int

const (
	setInter setOp = iota
	setUnion
	setDiff
)

// storeEvents are the STORE forms' event names.
var storeEvents = [...]string{setInter: "sinterstore", setUnion: "sunionstore", setDiff: "sdiffstore"}

// cmdSetOp is SINTER, SUNION, SDIFF and, with store, their STORE forms (the destination is
// args[1]). The result is built as Redis builds it, a set that starts as an intset, so its
// encoding and, for integers, its order are Redis's.
func cmdSetOp(op setOp, storeIt bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		keys := args[1:]
		if storeIt {
			keys = args[2:]
		}
		sets := make([]*store.Set, len(keys))
		missing := false
		for i, k := range keys {
			s, err := c.getSet(k)
			if err != nil {
				return nil, err
			}
			sets[i] = s
			missing = missing || s == nil
		}
		intsetMax := c.s.conf.setMaxIntsetEntries
		res := store.NewSet()
		switch op {
		case setInter:
			if missing {
				break // an intersection with an empty set is empty
			}
			interEach(sets, func(m []byte) bool {
				res.Add(m, intsetMax)
				return true
			})
		case setUnion:
			for _, s := range sets {
				if s != nil {
					for _, m := range s.Members() {
						res.Add(m, intsetMax)
					}
				}
			}
		case setDiff:
			if sets[0] == nil {
				break
			}
			for _, m := range sets[0].Members() {
				in := false
				for _, s := range sets[1:] {
					if s != nil && s.Has(m) {
						in = true
						break
					}
				}
				if !in {
					res.Add(m, intsetMax)
				}
			}
		}
		if !storeIt {
			return members(res.Members()), nil
		}
		dst := args[1]
		db := c.keyspace()
		if res.Len() == 0 {
			if db.Delete(string(dst)) {
				c.touch(dst)
				c.notify(notifyGeneric, "del", dst)
			}
			return 0, nil
		}
		if db.GetBytes(dst) == nil {
			c.keyAdded(dst)
		}
		db.SetClearTTL(string(dst), res)
		c.touch(dst)
		c.notify(notifySet, storeEvents[op], dst)
		return res.Len(), nil
	}
}

// cmdSintercard is SINTERCARD numkeys key [key ...] [LIMIT limit]: the intersection's size,
// counting stops at limit (0: no limit).
func cmdSintercard(c *client, args [][]byte) (any, error) {
	// Redis's own messages replace the integer error too (getRangeLongFromObjectOrReply).
	numkeys, ok := parseInt(args[1])
	if !ok || numkeys < 1 {
		return nil, redisError("ERR numkeys should be greater than 0")
	}
	if numkeys > int64(len(args)-2) {
		return nil, redisError("ERR Number of keys can't be greater than number of args")
	}
	limit := int64(0)
	for j := 2 + int(numkeys); j < len(args); j++ {
		if eq(args[j], "limit") && j < len(args)-1 {
			j++
			n, ok := parseInt(args[j])
			if !ok || n < 0 {
				return nil, redisError("ERR LIMIT can't be negative")
			}
			limit = n
		} else {
			return nil, errSyntax
		}
	}
	keys := args[2 : 2+numkeys]
	sets := make([]*store.Set, len(keys))
	for i, k := range keys {
		s, err := c.getSet(k)
		if err != nil {
			return nil, err
		}
		if s == nil {
			// Every key is still type-checked first, as in Redis.
			for _, k2 := range keys[i+1:] {
				if _, err := c.getSet(k2); err != nil {
					return nil, err
				}
			}
			return 0, nil
		}
		sets[i] = s
	}
	n := int64(0)
	interEach(sets, func([]byte) bool {
		n++
		return limit <= 0 || n < limit // LIMIT 0 is no limit
	})
	return n, nil
}

// interEach calls fn for each member of the intersection of sets (none nil), in the smallest
// set's order as Redis walks it, until fn returns false.
func interEach(sets []*store.Set, fn func(m []byte) bool) {
	smallest := sets[0]
	for _, s := range sets[1:] {
		if s.Len() < smallest.Len() {
			smallest = s
		}
	}
	for _, m := range smallest.Members() {
		in := true
		for _, s := range sets {
			if s != smallest && !s.Has(m) {
				in = false
				break
			}
		}
		if in && !fn(m) {
			return
		}
	}
}

func cmdSmismember(c *client, args [][]byte) (any, error) {
	s, err := c.getSet(args[1])
	if err != nil {
		return nil, err
	}
	out := make(resp.Array, len(args)-2)
	for i, m := range args[2:] {
		if s != nil && s.Has(m) {
			out[i] = 1
		} else {
			out[i] = 0
		}
	}
	return out, nil
}

func cmdSscan(c *client, args [][]byte) (any, error) {
	if _, ok := parseUintArg(args[2]); !ok {
		return nil, redisError("ERR invalid cursor")
	}
	s, err := c.getSet(args[1])
	if err != nil {
		return nil, err
	}
	if s == nil {
		return resp.Array{"0", resp.Array{}}, nil
	}
	pat, err := scanOpts(args[3:])
	if err != nil {
		return nil, err
	}
	out := resp.Array{}
	for _, m := range s.Members() {
		if pat == "" || globMatch(pat, string(m)) {
			out = append(out, m)
		}
	}
	return resp.Array{"0", out}, nil
}
