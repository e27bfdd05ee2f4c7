package server

import (
	"math"
	"sort"
	"strconv"
	"time"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

var genericCommands = []*command{
	{name: "del", arity: -2, flags: flagWrite, firstKey: 1, lastKey: -1, step: 1, group: "generic", summary: "Delete a key", h: cmdDel},
	{name: "unlink", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: -1, step: 1, group: "generic", summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", h: cmdDel},
	{name: "exists", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, group: "generic", summary: "Determine if a key exists", h: cmdExists},
	{name: "type", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Determine the type stored at key", h: cmdType},
	{name: "keys", arity: 2, flags: flagReadonly, group: "generic", summary: "Find all keys matching the given pattern", h: cmdKeys},
	{name: "scan", arity: -2, flags: flagReadonly, group: "generic", summary: "Incrementally iterate the keys space", h: cmdScan},
	{name: "dbsize", arity: 1, flags: flagReadonly | flagFast, group: "server", summary: "Return the number of keys in the selected database", h: cmdDbsize},
	{name: "expire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Set a key's time to live in seconds", h: cmdExpire(time.Second, false)},
	{name: "pexpire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Set a key's time to live in milliseconds", h: cmdExpire(time.Millisecond, false)},
	{name: "expireat", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Set the expiration for a key as a UNIX timestamp", h: cmdExpire(time.Second, true)},
	{name: "pexpireat", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Set the expiration for a key as a UNIX timestamp specified in milliseconds", h: cmdExpire(time.Millisecond, true)},
	{name: "expiretime", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Get the expiration Unix timestamp for a key", h: cmdExpiretime(time.Second)},
	{name: "pexpiretime", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Get the expiration Unix timestamp for a key in milliseconds", h: cmdExpiretime(time.Millisecond)},
	{name: "touch", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, group: "generic", summary: "Alters the last access time of a key(s). Returns the number of existing keys specified.", h: cmdExists},
	{name: "randomkey", arity: 1, flags: flagReadonly, group: "generic", summary: "Return a random key from the keyspace", h: cmdRandomkey},
	{name: "copy", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 2, step: 1, group: "generic", summary: "Copy a key", h: cmdCopy},
	{name: "role", arity: 1, flags: flagNoScript | flagLoading | flagStale | flagFast, group: "server", summary: "Return the role of the instance in the context of replication", h: cmdRole},
	{name: "ttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Get the time to live for a key in seconds", h: cmdTTL(time.Second)},
	{name: "pttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Get the time to live for a key in milliseconds", h: cmdTTL(time.Millisecond)},
	{name: "persist", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Remove the expiration from a key", h: cmdPersist},
	{name: "get", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the value of a key", h: cmdGet},
	{name: "incr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Increment the integer value of a key by one", h: cmdIncrBy(1, false)},
	{name: "decr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Decrement the integer value of a key by one", h: cmdIncrBy(-1, false)},
	{name: "incrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Increment the integer value of a key by the given amount", h: cmdIncrBy(0, true)},
}

func cmdDel(c *client, args [][]byte) (any, error) {
	n := 0
	for _, k := range args[1:] {
		if c.keyspace().Delete(string(k)) {
			c.touch(k)
			c.notify(notifyGeneric, "del", k)
			n++
		}
	}
	return n, nil
}

func cmdExists(c *client, args [][]byte) (any, error) {
	n := 0
	for _, k := range args[1:] {
		if c.keyspace().Get(string(k)) != nil {
			n++
		}
	}
	return n, nil
}

func cmdType(c *client, args [][]byte) (any, error) {
	return resp.Simple(store.TypeName(c.keyspace().Get(string(args[1])))), nil
}

// globMatch is Redis's stringmatchlen, for KEYS, SCAN MATCH, PSUBSCRIBE and CONFIG GET patterns.
func globMatch(pattern, s string) bool { return stringMatch(pattern, s, false) }

// stringMatch implements Redis's glob: * ? [abc] [^a] [a-z] and backslash escapes.
func stringMatch(p, s string, nocase bool) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if stringMatch(p[1:], s[i:], nocase) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
			p = p[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) == 0 {
					break
				}
				if p[0] == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					start, end := p[0], p[2]
					if start > end {
						start, end = end, start
					}
					c := s[0]
					if nocase {
						c, start, end = lower(c), lower(start), lower(end)
					}
					if c >= start && c <= end {
						match = true
					}
					p = p[2:]
				} else {
					if eqByte(p[0], s[0], nocase) {
						match = true
					}
				}
				p = p[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
			if len(p) > 0 {
				p = p[1:] // the ']'
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || !eqByte(p[0], s[0], nocase) {
				return false
			}
			s = s[1:]
			p = p[1:]
		}
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			return len(p) == 0
		}
	}
	return len(s) == 0
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func eqByte(a, b byte, nocase bool) bool {
	if nocase {
		return lower(a) == lower(b)
	}
	return a == b
}

func cmdKeys(c *client, args [][]byte) (any, error) {
	pat := string(args[1])
	out := [][]byte{}
	c.keyspace().Keys(func(k string, _ any) bool {
		if pat == "*" || globMatch(pat, k) {
			out = append(out, []byte(k))
		}
		return true
	})
	return out, nil
}

// cmdScan returns every matching key in one sorted pass with cursor 0: a valid SCAN answer
// (a full iteration returns each key), simple and stable.
func cmdScan(c *client, args [][]byte) (any, error) {
	if _, ok := parseUintArg(args[1]); !ok {
		return nil, redisError("ERR invalid cursor")
	}
	pat, typ := "", ""
	for i := 2; i < len(args); i++ {
		more := len(args) - 1 - i
		switch {
		case eq(args[i], "count") && more > 0:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return nil, errNotInteger
			}
			if n < 1 {
				return nil, errSyntax
			}
		case eq(args[i], "match") && more > 0:
			i++
			pat = string(args[i])
		case eq(args[i], "type") && more > 0:
			i++
			typ = string(args[i])
		default:
			return nil, errSyntax
		}
	}
	keys := []string{}
	c.keyspace().Keys(func(k string, v any) bool {
		if (pat == "" || globMatch(pat, k)) && (typ == "" || eqFold(typ, store.TypeName(v))) {
			keys = append(keys, k)
		}
		return true
	})
	sort.Strings(keys)
	return resp.Array{"0", keys}, nil
}

func eqFold(a, b string) bool { return eq([]byte(a), b) }

func parseUintArg(b []byte) (uint64, bool) {
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

func cmdDbsize(c *client, args [][]byte) (any, error) { return c.keyspace().Len(), nil }

// cmdExpire is EXPIRE and PEXPIRE, or with at EXPIREAT and PEXPIREAT: expireGenericCommand,
// options parsed before the time, as Redis does.
func cmdExpire(unit time.Duration, at bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		var nx, xx, gt, lt bool
		for _, o := range args[3:] {
			switch {
			case eq(o, "nx"):
				nx = true
			case eq(o, "xx"):
				xx = true
			case eq(o, "gt"):
				gt = true
			case eq(o, "lt"):
				lt = true
			default:
				return nil, errorf("ERR Unsupported option %s", o)
			}
		}
		if nx && (xx || gt || lt) {
			return nil, redisError("ERR NX and XX, GT or LT options at the same time are not compatible")
		}
		if gt && lt {
			return nil, redisError("ERR GT and LT options at the same time are not compatible")
		}
		when, ok := parseInt(args[2])
		if !ok {
			return nil, errNotInteger
		}
		invalid := errorf("ERR invalid expire time in '%s' command", lowerASCII(args[0]))
		if unit == time.Second {
			if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
				return nil, invalid
			}
			when *= 1000
		}
		now := c.s.store.NowMs()
		if !at {
			if when > math.MaxInt64-now {
				return nil, invalid
			}
			when += now
		}
		db := c.keyspace()
		key := string(args[1])
		if db.Get(key) == nil {
			return 0, nil
		}
		cur, has := db.ExpireAt(key)
		switch {
		case nx && has, xx && !has:
			return 0, nil
		case gt && (!has || when <= cur):
			return 0, nil
		case lt && has && when >= cur:
			return 0, nil
		}
		c.touch(args[1])
		if when <= now {
			db.Delete(key)
			c.notify(notifyGeneric, "del", args[1])
			return 1, nil
		}
		db.Expire(key, when)
		c.notify(notifyGeneric, "expire", args[1])
		return 1, nil
	}
}

// cmdExpiretime is EXPIRETIME and PEXPIRETIME: the absolute Unix time, -1 without a TTL,
// -2 without the key.
func cmdExpiretime(unit time.Duration) handler { return expiryReply(unit, true) }

// cmdTTL is TTL and PTTL: the time left, -1 without a TTL, -2 without the key.
func cmdTTL(unit time.Duration) handler { return expiryReply(unit, false) }

// expiryReply is the one body of TTL, PTTL, EXPIRETIME and PEXPIRETIME: the expiry as a time
// left (or, if absolute, as a Unix time) in unit, seconds rounded to nearest as Redis does.
func expiryReply(unit time.Duration, absolute bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		db := c.keyspace()
		key := string(args[1])
		if db.Get(key) == nil {
			return -2, nil
		}
		at, ok := db.ExpireAt(key)
		if !ok {
			return -1, nil
		}
		ms := at
		if !absolute {
			ms -= c.s.store.NowMs()
		}
		ms = max(ms, 0)
		if unit == time.Second {
			return (ms + 500) / 1000, nil
		}
		return ms, nil
	}
}

func cmdPersist(c *client, args [][]byte) (any, error) {
	db := c.keyspace()
	key := string(args[1])
	if db.Get(key) == nil {
		return 0, nil
	}
	if db.Persist(key) {
		c.touch(args[1])
		c.notify(notifyGeneric, "persist", args[1])
		return 1, nil
	}
	return 0, nil
}

func cmdGet(c *client, args [][]byte) (any, error) {
	v := c.keyspace().Get(string(args[1]))
	if v == nil {
		return nil, nil
	}
	sv, ok := v.(*store.String)
	if !ok {
		return nil, errWrongType
	}
	return sv.B, nil
}

func cmdIncrBy(delta int64, fromArg bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		delta := delta
		if fromArg {
			n, ok := parseInt(args[2])
			if !ok {
				return nil, errNotInteger
			}
			delta = n
		}
		db := c.keyspace()
		key := string(args[1])
		var cur int64
		if v := db.Get(key); v != nil {
			sv, ok := v.(*store.String)
			if !ok {
				return nil, errWrongType
			}
			n, ok := parseInt(sv.B)
			if !ok {
				return nil, errNotInteger
			}
			cur = n
		}
		if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
			return nil, redisError("ERR increment or decrement would overflow")
		}
		cur += delta
		c.touch(args[1])
		if db.Get(key) == nil {
			c.keyAdded(args[1])
		}
		db.Set(key, &store.String{B: strconv.AppendInt(nil, cur, 10)})
		c.notify(notifyString, "incrby", args[1])
		return cur, nil
	}
}

// cmdRandomkey answers the first live key of a map iteration, which Go starts at a random
// place: random, though not uniform (Redis's dictGetFairRandomKey is not uniform either).
func cmdRandomkey(c *client, args [][]byte) (any, error) {
	var out any
	c.keyspace().Keys(func(k string, _ any) bool {
		out = []byte(k)
		return false
	})
	return out, nil
}

// cmdCopy is COPY source destination [DB n] [REPLACE]: a deep copy keeping the source's
// encoding and TTL (db.c copyCommand).
func cmdCopy(c *client, args [][]byte) (any, error) {
	dstID, replace := c.db, false
	for j := 3; j < len(args); j++ {
		switch {
		case eq(args[j], "replace"):
			replace = true
		case eq(args[j], "db") && j < len(args)-1:
			n, ok := parseInt(args[j+1])
			if !ok || n < math32Min || n > math32Max {
				return nil, errNotInteger
			}
			if n < 0 || n >= store.NumDBs {
				return nil, errDBIndex
			}
			dstID = int(n)
			j++
		default:
			return nil, errSyntax
		}
	}
	if dstID == c.db && string(args[1]) == string(args[2]) {
		return nil, redisError("ERR source and destination objects are the same")
	}
	src, dst := c.keyspace(), c.s.store.DBs[dstID]
	key, newKey := string(args[1]), string(args[2])
	v := src.Get(key)
	if v == nil {
		return 0, nil
	}
	at, hasTTL := src.ExpireAt(key)
	if dst.Get(newKey) != nil {
		if !replace {
			return 0, nil
		}
		dst.Delete(newKey)
	}
	nv, err := copyValue(v)
	if err != nil {
		return nil, err
	}
	dst.SetClearTTL(newKey, nv)
	c.s.notify(notifyNew, "new", args[2], dstID)
	c.s.signalKey(dstID, newKey) // a list or stream copied in serves clients blocked on it
	if hasTTL {
		dst.Expire(newKey, at)
	}
	c.s.touch(dstID, args[2])
	c.s.notify(notifyGeneric, "copy_to", args[2], dstID)
	return 1, nil
}

// copyValue deep-copies a value. Strings keep their flags; the other types go through their
// dump encoding, which keeps set and hash encodings and a stream's groups and pending entries.
func copyValue(v any) (any, error) {
	if sv, ok := v.(*store.String); ok {
		return &store.String{B: clone(sv.B), NoInt: sv.NoInt, Raw: sv.Raw}, nil
	}
	if lv, ok := v.(*store.List); ok {
		return lv.Clone(), nil // its quicklist nodes too, as quicklistDup copies them
	}
	nv, err := store.DecodeDump(store.AppendDump(nil, v))
	if err != nil {
		return nil, redisError("ERR unknown type object")
	}
	return nv, nil
}

// cmdRole answers as a master without replicas: the server does not replicate.
func cmdRole(c *client, args [][]byte) (any, error) {
	return resp.Array{[]byte("master"), 0, resp.Array{}}, nil
}
