package server

import (
	"math"
	"math/big"
	"strings"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// Key-level commands beyond cmd_generic.go: multi-key strings, renames and moves between
// databases, and OBJECT.
var keyCommands = []*command{
	{name: "mset", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2, group: "string", summary: "Set multiple keys to multiple values", h: cmdMset},
	{name: "mget", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, group: "string", summary: "Get the values of all the given keys", h: cmdMget},
	{name: "getset", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the string value of a key and return its old value", h: cmdGetset},
	{name: "incrbyfloat", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Increment the float value of a key by the given amount", h: cmdIncrbyfloat},
	{name: "rename", arity: 3, flags: flagWrite, firstKey: 1, lastKey: 2, step: 1, group: "generic", summary: "Rename a key", h: cmdRename(false)},
	{name: "renamenx", arity: 3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 2, step: 1, group: "generic", summary: "Rename a key, only if the new key does not exist", h: cmdRename(true)},
	{name: "move", arity: 3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Move a key to another database", h: cmdMove},
	{name: "swapdb", arity: 3, flags: flagWrite | flagFast, group: "server", summary: "Swaps two Redis databases", h: cmdSwapdb},
	{name: "object", arity: -2, group: "generic", summary: "A container for object introspection commands", subs: []*command{
		{name: "encoding", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "generic", summary: "Inspect the internal encoding of a Redis object", h: cmdObjectEncoding},
		{name: "freq", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "generic", summary: "Get the logarithmic access frequency counter of a Redis object", h: cmdObjectFreq},
		{name: "idletime", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "generic", summary: "Get the time since a Redis object was last accessed", h: cmdObjectIdletime},
		{name: "refcount", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, group: "generic", summary: "Get the number of references to the value of the key", h: cmdObjectRefcount},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "generic", summary: "Show helpful text about the different subcommands", h: cmdObjectHelp},
	}},
}

// setString stores a string as SET does (expiry cleared), with its events.
func (c *client) setString(key, val []byte, noInt bool) {
	db := c.keyspace()
	k := string(key)
	if db.Get(k) == nil {
		c.keyAdded(key)
	}
	c.touch(key)
	db.SetClearTTL(k, &store.String{B: clone(val), NoInt: noInt})
	c.notify(notifyString, "set", key)
}

func cmdMset(c *client, args [][]byte) (any, error) {
	if len(args)%2 == 0 {
		return nil, errArity("mset")
	}
	for i := 1; i < len(args); i += 2 {
		c.setString(args[i], args[i+1], false)
	}
	return resp.OK, nil
}

func cmdMget(c *client, args [][]byte) (any, error) {
	out := make(resp.Array, 0, len(args)-1)
	for _, k := range args[1:] {
		if sv, ok := c.keyspace().Get(string(k)).(*store.String); ok {
			out = append(out, sv.B)
		} else {
			out = append(out, nil)
		}
	}
	return out, nil
}

func cmdGetset(c *client, args [][]byte) (any, error) {
	v := c.keyspace().Get(string(args[1]))
	var old any
	if v != nil {
		sv, ok := v.(*store.String)
		if !ok {
			return nil, errWrongType
		}
		old = sv.B
	}
	c.setString(args[1], args[2], false)
	return old, nil
}

// longDouble parses b as Redis's string2ld does, at x87 long double precision (64-bit
// mantissa), so sums round as Redis's do.
func longDouble(b []byte) (*big.Float, bool) {
	if _, ok := parseFloat(b); !ok {
		return nil, false
	}
	f, _, err := big.ParseFloat(string(b), 0, 64, big.ToNearestEven)
	if err != nil || outOfLongDouble(f) {
		return nil, false // strtold's ERANGE, which string2ld refuses
	}
	return f, true
}

func cmdIncrbyfloat(c *client, args [][]byte) (any, error) {
	db := c.keyspace()
	key := string(args[1])
	cur := new(big.Float).SetPrec(64)
	v := db.Get(key)
	if v != nil {
		sv, ok := v.(*store.String)
		if !ok {
			return nil, errWrongType
		}
		f, ok := longDouble(sv.B)
		if !ok {
			return nil, errNotFloat
		}
		cur = f
	}
	incr, ok := longDouble(args[2])
	if !ok {
		return nil, errNotFloat
	}
	sum := new(big.Float).SetPrec(64).Add(cur, incr)
	if sum.IsInf() || outOfLongDouble(sum) {
		return nil, redisError("ERR increment would produce NaN or Infinity")
	}
	out := humanLongDouble(sum)
	if v == nil {
		c.keyAdded(args[1])
	}
	c.touch(args[1])
	db.Set(key, &store.String{B: []byte(out), NoInt: true}) // the TTL stays, as in Redis
	c.notify(notifyString, "incrbyfloat", args[1])
	return []byte(out), nil
}

// outOfLongDouble reports a finite value beyond x87 long double's range (which overflows to
// infinity or underflows to zero there).
func outOfLongDouble(f *big.Float) bool {
	if f.IsInf() || f.Sign() == 0 {
		return false
	}
	e := f.MantExp(nil)
	return e > 16384 || e < -16444
}

// humanLongDouble is ld2string's LD_STR_HUMAN: "%.17Lf" without trailing zeros.
func humanLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func cmdRename(nx bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		db := c.keyspace()
		src, dst := string(args[1]), string(args[2])
		v := db.Get(src)
		if v == nil {
			return nil, errNoSuchKey
		}
		if src == dst {
			if nx {
				return 0, nil
			}
			return resp.OK, nil
		}
		at, hasTTL := db.ExpireAt(src)
		if db.Get(dst) != nil {
			if nx {
				return 0, nil
			}
			db.Delete(dst)
		}
		db.SetClearTTL(dst, v)
		c.keyAdded(args[2])
		c.s.signalKey(c.db, dst)
		if hasTTL {
			db.Expire(dst, at)
		}
		db.Delete(src)
		c.touch(args[1])
		c.touch(args[2])
		c.notify(notifyGeneric, "rename_from", args[1])
		c.notify(notifyGeneric, "rename_to", args[2])
		if nx {
			return 1, nil
		}
		return resp.OK, nil
	}
}

func cmdMove(c *client, args [][]byte) (any, error) {
	n, ok := parseInt(args[2])
	if !ok || n < math32Min || n > math32Max {
		return nil, errNotInteger
	}
	if n < 0 || n >= store.NumDBs {
		return nil, errDBIndex
	}
	dstID := int(n)
	if dstID == c.db {
		return nil, redisError("ERR source and destination objects are the same")
	}
	src, dst := c.keyspace(), c.s.store.DBs[dstID]
	key := string(args[1])
	v := src.Get(key)
	if v == nil {
		return 0, nil
	}
	at, hasTTL := src.ExpireAt(key)
	if dst.Get(key) != nil {
		return 0, nil
	}
	dst.SetClearTTL(key, v)
	c.s.notify(notifyNew, "new", args[1], dstID)
	c.s.signalKey(dstID, key)
	if hasTTL {
		dst.Expire(key, at)
	}
	src.Delete(key)
	c.touch(args[1])
	c.s.touch(dstID, args[1])
	c.notify(notifyGeneric, "move_from", args[1])
	c.s.notify(notifyGeneric, "move_to", args[1], dstID)
	return 1, nil
}

func cmdSwapdb(c *client, args [][]byte) (any, error) {
	a, ok := parseInt(args[1])
	if !ok || a < math32Min || a > math32Max {
		return nil, redisError("ERR invalid first DB index")
	}
	b, ok := parseInt(args[2])
	if !ok || b < math32Min || b > math32Max {
		return nil, redisError("ERR invalid second DB index")
	}
	if a < 0 || a >= store.NumDBs || b < 0 || b >= store.NumDBs {
		return nil, errDBIndex
	}
	if a == b {
		return resp.OK, nil
	}
	s := c.s
	// Watched keys that exist on either side change (touchAllWatchedKeysInDb).
	for dk, ws := range s.watchers {
		if (dk.db == int(a) || dk.db == int(b)) &&
			(s.store.DBs[a].Get(dk.key) != nil || s.store.DBs[b].Get(dk.key) != nil) {
			for _, w := range ws {
				w.dirtyCAS = true
			}
		}
	}
	s.store.DBs[a].Swap(s.store.DBs[b])
	// Clients blocked in either database see the other's keys now.
	s.signalDB(int(a), readyData|readyGone)
	s.signalDB(int(b), readyData|readyGone)
	return resp.OK, nil
}

// encodingOf is OBJECT ENCODING as Redis 7.0.15 reports it for the value's shape and size.
func (s *Server) encodingOf(v any) string {
	switch v := v.(type) {
	case *store.String:
		if v.Raw {
			return "raw"
		}
		if !v.NoInt && len(v.B) <= 20 {
			if _, ok := parseInt(v.B); ok {
				return "int"
			}
		}
		if len(v.B) <= 44 {
			return "embstr"
		}
		return "raw"
	case *store.List:
		return "quicklist" // 7.0 has no listpack-encoded lists (7.2 added them)
	case *store.Stream:
		return "stream"
	case *store.Set:
		if v.IsIntset() {
			return "intset"
		}
		return "hashtable"
	case *store.Hash:
		if v.IsListpack() {
			return "listpack"
		}
		return "hashtable"
	case *store.Zset:
		return zsetEncoding(v)
	}
	return "unknown"
}

func cmdObjectEncoding(c *client, args [][]byte) (any, error) {
	v := c.keyspace().Get(string(args[2]))
	if v == nil {
		return nil, nil
	}
	return c.s.encodingOf(v), nil
}

func cmdObjectFreq(c *client, args [][]byte) (any, error) {
	if c.keyspace().Get(string(args[2])) == nil {
		return nil, nil
	}
	return nil, redisError("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
}

// cmdObjectIdletime answers 0: the server does not track access times.
func cmdObjectIdletime(c *client, args [][]byte) (any, error) {
	if c.keyspace().Get(string(args[2])) == nil {
		return nil, nil
	}
	return 0, nil
}

// cmdObjectRefcount answers as Redis does without maxmemory: small integers are shared.
func cmdObjectRefcount(c *client, args [][]byte) (any, error) {
	v := c.keyspace().Get(string(args[2]))
	if v == nil {
		return nil, nil
	}
	if sv, ok := v.(*store.String); ok && !sv.NoInt && !sv.Raw {
		if n, ok := parseInt(sv.B); ok && n >= 0 && n < 10000 {
			return math.MaxInt32, nil
		}
	}
	return 1, nil
}

func cmdObjectHelp(c *client, args [][]byte) (any, error) {
	return helpReply("OBJECT",
		"ENCODING <key>", "    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.", "FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>", "    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>", "    Return the number of references of the value associated with the specified",
		"    <key>."), nil
}
