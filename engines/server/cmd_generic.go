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
	{name: "expire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Set a key's time to live in seconds", h: cmdExpire(time.Second)},
	{name: "pexpire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Set a key's time to live in milliseconds", h: cmdExpire(time.Millisecond)},
	{name: "ttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Get the time to live for a key in seconds", h: cmdTTL(time.Second)},
	{name: "pttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Get the time to live for a key in milliseconds", h: cmdTTL(time.Millisecond)},
	{name: "persist", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Remove the expiration from a key", h: cmdPersist},
	{name: "set", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the string value of a key", h: cmdSet},
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

func cmdExpire(unit time.Duration) handler {
	return func(c *client, args [][]byte) (any, error) {
		n, ok := parseInt(args[2])
		if !ok {
			return nil, errNotInteger
		}
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
		ms := n
		if unit == time.Second {
			if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
				return nil, errorf("ERR invalid expire time in '%s' command", lowerASCII(args[0]))
			}
			ms = n * 1000
		}
		now := c.s.store.NowMs()
		if ms > 0 && now > math.MaxInt64-ms {
			return nil, errorf("ERR invalid expire time in '%s' command", lowerASCII(args[0]))
		}
		at := now + ms
		db := c.keyspace()
		key := string(args[1])
		if db.Get(key) == nil {
			return 0, nil
		}
		cur, has := db.ExpireAt(key)
		switch {
		case nx && has, xx && !has:
			return 0, nil
		case gt && (!has || at <= cur):
			return 0, nil
		case lt && has && at >= cur:
			return 0, nil
		}
		c.touch(args[1])
		if at <= now {
			db.Delete(key)
			c.notify(notifyGeneric, "del", args[1])
			return 1, nil
		}
		db.Expire(key, at)
		c.notify(notifyGeneric, "expire", args[1])
		return 1, nil
	}
}

func cmdTTL(unit time.Duration) handler {
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
		ms := max(at-c.s.store.NowMs(), 0)
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

func cmdSet(c *client, args [][]byte) (any, error) {
	var nx, xx, get, keepTTL bool
	expireMs := int64(-1)
	now := c.s.store.NowMs()
	for i := 3; i < len(args); i++ {
		more := i+1 < len(args)
		o := args[i]
		switch {
		case eq(o, "nx") && !xx:
			nx = true
		case eq(o, "xx") && !nx:
			xx = true
		case eq(o, "get"):
			get = true
		case eq(o, "keepttl") && expireMs < 0:
			keepTTL = true
		case (eq(o, "ex") || eq(o, "px") || eq(o, "exat") || eq(o, "pxat")) && more && !keepTTL && expireMs < 0:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return nil, errNotInteger
			}
			if n <= 0 {
				return nil, errInvalidExpire
			}
			switch {
			case eq(o, "ex"):
				expireMs = now + n*1000
			case eq(o, "px"):
				expireMs = now + n
			case eq(o, "exat"):
				expireMs = n * 1000
			default:
				expireMs = n
			}
		default:
			return nil, errSyntax
		}
	}
	db := c.keyspace()
	key := string(args[1])
	old := db.Get(key)
	var oldVal any
	if get {
		if old != nil {
			sv, ok := old.(*store.String)
			if !ok {
				return nil, errWrongType
			}
			oldVal = sv.B
		}
	}
	if (nx && old != nil) || (xx && old == nil) {
		if get {
			return oldVal, nil
		}
		return nil, nil
	}
	c.touch(args[1])
	v := &store.String{B: clone(args[2])}
	if old == nil {
		c.keyAdded(args[1])
	}
	if keepTTL {
		db.Set(key, v)
	} else {
		db.SetClearTTL(key, v)
	}
	c.notify(notifyString, "set", args[1])
	if expireMs >= 0 {
		db.Expire(key, expireMs)
		c.notify(notifyGeneric, "expire", args[1])
	}
	if get {
		return oldVal, nil
	}
	return resp.OK, nil
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
