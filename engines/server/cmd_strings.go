package server

import (
	"math"
	"strconv"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// String commands beyond GET/INCR (cmd_generic.go) and MSET/MGET/GETSET/INCRBYFLOAT
// (cmd_keys.go), as Redis 7.0.15's t_string.c.
var stringCommands = []*command{
	{name: "set", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the string value of a key", h: cmdSet},
	{name: "setnx", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the value of a key, only if the key does not exist", h: cmdSetnx},
	{name: "setex", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the value and expiration of a key", h: cmdSetex(true)},
	{name: "psetex", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the value and expiration in milliseconds of a key", h: cmdSetex(false)},
	{name: "msetnx", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2, group: "string", summary: "Set multiple keys to multiple values, only if none of the keys exist", h: cmdMsetnx},
	{name: "append", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Append a value to a key", h: cmdAppend},
	{name: "strlen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the length of the value stored in a key", h: cmdStrlen},
	{name: "getrange", arity: 4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get a substring of the string stored at a key", h: cmdGetrange},
	{name: "substr", arity: 4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get a substring of the string stored at a key", h: cmdGetrange},
	{name: "setrange", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Overwrite part of a string at key starting at the specified offset", h: cmdSetrange},
	{name: "getdel", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the value of a key and delete the key", h: cmdGetdel},
	{name: "getex", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the value of a key and optionally set its expiration", h: cmdGetex},
	{name: "decrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Decrement the integer value of a key by the given number", h: cmdDecrby},
}

// protoMaxBulkLen is proto-max-bulk-len's default, the largest string SETRANGE and APPEND build.
const protoMaxBulkLen = 512 << 20

// Flags of parseExtendedStringArgumentsOrReply.
const (
	strNX = 1 << iota
	strXX
	strGet
	strKeepTTL
	strPersist
	strEX
	strPX
	strEXAT
	strPXAT
	strExpiry = strEX | strPX | strEXAT | strPXAT
)

// expiryOpt is the flag of an expiry option (EX, PX, EXAT, PXAT); 0 for any other word.
func expiryOpt(o []byte) int {
	switch {
	case eq(o, "ex"):
		return strEX
	case eq(o, "px"):
		return strPX
	case eq(o, "exat"):
		return strEXAT
	case eq(o, "pxat"):
		return strPXAT
	}
	return 0
}

// stringOpts parses SET's (from args[3]) or GETEX's (from args[2]) options as Redis's
// parseExtendedStringArgumentsOrReply does: a repeated expiry of the same kind is accepted, the
// last one wins. It returns the flags and the expiry argument.
func stringOpts(args [][]byte, getex bool) (int, []byte, error) {
	flags := 0
	var expire []byte
	start := 3
	if getex {
		start = 2
	}
	for j := start; j < len(args); j++ {
		o := args[j]
		next := j+1 < len(args)
		switch {
		case eq(o, "nx") && flags&strXX == 0 && !getex:
			flags |= strNX
		case eq(o, "xx") && flags&strNX == 0 && !getex:
			flags |= strXX
		case eq(o, "get") && !getex:
			flags |= strGet
		case eq(o, "keepttl") && flags&(strPersist|strExpiry) == 0 && !getex:
			flags |= strKeepTTL
		case eq(o, "persist") && getex && flags&(strExpiry|strKeepTTL) == 0:
			flags |= strPersist
		case expiryOpt(o) != 0 && flags&(strKeepTTL|strPersist|strExpiry&^expiryOpt(o)) == 0 && next:
			// EX, PX, EXAT or PXAT: refused beside KEEPTTL, PERSIST or an expiry of another kind
			flags |= expiryOpt(o)
			j++
			expire = args[j]
		default:
			return 0, nil, errSyntax
		}
	}
	return flags, expire, nil
}

// expireMs is getExpireMillisecondsOrReply: the absolute Unix ms an EX/PX/EXAT/PXAT argument
// names, or "invalid expire time" (zero, negative, or overflowing).
func (c *client) expireMs(arg []byte, flags int, cmd string) (int64, error) {
	n, ok := parseInt(arg)
	if !ok {
		return 0, errNotInteger
	}
	seconds := flags&(strEX|strEXAT) != 0
	if n <= 0 || (seconds && n > math.MaxInt64/1000) {
		return 0, errorf("ERR invalid expire time in '%s' command", cmd)
	}
	if seconds {
		n *= 1000
	}
	if flags&(strEX|strPX) != 0 {
		n += c.s.store.NowMs() // wraps negative on overflow, as in Redis
	}
	if n <= 0 {
		return 0, errorf("ERR invalid expire time in '%s' command", cmd)
	}
	return n, nil
}

// getString returns the string at key, nil if missing, or WRONGTYPE.
func (c *client) getString(key []byte) (*store.String, error) {
	v := c.keyspace().GetBytes(key)
	if v == nil {
		return nil, nil
	}
	sv, ok := v.(*store.String)
	if !ok {
		return nil, errWrongType
	}
	return sv, nil
}

// ownArg returns a copy of arg for a value to keep, or arg itself when the connection's reader
// hands its buffer over (resp.Reader.Adopt: a large value that arrived alone), so a 150 MB SET
// holds the value once, as Redis does, not the buffer and a copy.
func (c *client) ownArg(arg []byte) []byte {
	if c.rd != nil && c.rd.Adopt(arg) {
		return arg[:len(arg):len(arg)]
	}
	return clone(arg)
}

// setGeneric is setGenericCommand: okReply and abortReply nil mean +OK and a null.
func (c *client) setGeneric(flags int, key, val, expire []byte, cmd string, okReply, abortReply any) (any, error) {
	var at int64
	if expire != nil {
		var err error
		if at, err = c.expireMs(expire, flags, cmd); err != nil {
			return nil, err
		}
	}
	var old any
	if flags&strGet != 0 {
		sv, err := c.getString(key)
		if err != nil {
			return nil, err
		}
		if sv != nil {
			old = sv.B
		}
	}
	db := c.keyspace()
	k := string(key)
	found := db.Get(k) != nil
	if (flags&strNX != 0 && found) || (flags&strXX != 0 && !found) {
		if flags&strGet != 0 {
			return old, nil
		}
		return abortReply, nil
	}
	if !found {
		c.keyAdded(key)
	}
	c.touch(key)
	v := &store.String{B: c.ownArg(val)}
	if flags&strKeepTTL != 0 {
		db.Set(k, v)
	} else {
		db.SetClearTTL(k, v)
	}
	c.notify(notifyString, "set", key)
	if expire != nil {
		db.Expire(k, at)
		c.notify(notifyGeneric, "expire", key)
	}
	if flags&strGet != 0 {
		return old, nil
	}
	if okReply == nil {
		return resp.OK, nil
	}
	return okReply, nil
}

func cmdSet(c *client, args [][]byte) (any, error) {
	flags, expire, err := stringOpts(args, false)
	if err != nil {
		return nil, err
	}
	return c.setGeneric(flags, args[1], args[2], expire, "set", nil, nil)
}

func cmdSetnx(c *client, args [][]byte) (any, error) {
	return c.setGeneric(strNX, args[1], args[2], nil, "setnx", 1, 0)
}

func cmdSetex(seconds bool) handler {
	return func(c *client, args [][]byte) (any, error) {
		if seconds {
			return c.setGeneric(strEX, args[1], args[3], args[2], "setex", nil, nil)
		}
		return c.setGeneric(strPX, args[1], args[3], args[2], "psetex", nil, nil)
	}
}

func cmdMsetnx(c *client, args [][]byte) (any, error) {
	if len(args)%2 == 0 {
		return nil, errArity("msetnx")
	}
	for i := 1; i < len(args); i += 2 {
		if c.keyspace().GetBytes(args[i]) != nil {
			return 0, nil
		}
	}
	for i := 1; i < len(args); i += 2 {
		c.setString(args[i], args[i+1], false)
	}
	return 1, nil
}

// checkStringLength is Redis's: a string may not grow past proto-max-bulk-len.
func checkStringLength(size, add int64) error {
	if size+add > protoMaxBulkLen {
		return redisError("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	}
	return nil
}

func cmdAppend(c *client, args [][]byte) (any, error) {
	sv, err := c.getString(args[1])
	if err != nil {
		return nil, err
	}
	db := c.keyspace()
	if sv == nil {
		// A new key holds the argument itself, encoded as SET would (int, embstr or raw).
		c.keyAdded(args[1])
		db.Set(string(args[1]), &store.String{B: clone(args[2])})
		c.touch(args[1])
		c.notify(notifyString, "append", args[1])
		return len(args[2]), nil
	}
	if err := checkStringLength(int64(len(sv.B)), int64(len(args[2]))); err != nil {
		return nil, err
	}
	// dbUnshareStringValue: the value becomes a raw string, whatever it held. It grows in
	// place (growString), so appends to a large string cost what they add, not its length.
	sv.B = append(growString(sv.B, len(args[2])), args[2]...)
	sv.Raw, sv.NoInt = true, false
	c.touch(args[1])
	c.notify(notifyString, "append", args[1])
	return len(sv.B), nil
}

// growString returns b with room for extra more bytes, reallocating (and copying) only when
// its capacity is short, to twice the need below 1 MB, and past it to the need plus 1 MB or
// an eighth, whichever is more: Redis's sdsMakeRoomFor greed (SDS_MAX_PREALLOC) with a floor
// that keeps a run of small appends to a huge string at a bounded number of copies per byte
// (Redis's realloc grows such a block in place; a Go slice cannot). A string's value is
// owned by its key alone (SET, COPY, RESTORE and the rest store copies; replies copy into
// the output buffer under the store lock), so growing it in place is safe.
func growString(b []byte, extra int) []byte {
	need := len(b) + extra
	if need <= cap(b) {
		return b
	}
	c := 2 * need
	if need >= 1<<20 {
		c = need + max(1<<20, need/8)
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

func cmdStrlen(c *client, args [][]byte) (any, error) {
	sv, err := c.getString(args[1])
	if err != nil || sv == nil {
		return 0, err
	}
	return len(sv.B), nil
}

func cmdGetrange(c *client, args [][]byte) (any, error) {
	start, err := intArg(args[2])
	if err != nil {
		return nil, err
	}
	end, err := intArg(args[3])
	if err != nil {
		return nil, err
	}
	sv, err := c.getString(args[1])
	if err != nil {
		return nil, err
	}
	if sv == nil {
		return []byte{}, nil
	}
	n := int64(len(sv.B))
	if start < 0 && end < 0 && start > end {
		return []byte{}, nil
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return []byte{}, nil
	}
	return sv.B[start : end+1], nil
}

func cmdSetrange(c *client, args [][]byte) (any, error) {
	offset, err := intArg(args[2])
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, redisError("ERR offset is out of range")
	}
	val := args[3]
	sv, err := c.getString(args[1])
	if err != nil {
		return nil, err
	}
	db := c.keyspace()
	var cur []byte
	if sv == nil {
		if len(val) == 0 {
			return 0, nil
		}
		if err := checkStringLength(offset, int64(len(val))); err != nil {
			return nil, err
		}
		c.keyAdded(args[1])
	} else {
		if len(val) == 0 {
			return len(sv.B), nil
		}
		if err := checkStringLength(offset, int64(len(val))); err != nil {
			return nil, err
		}
		cur = sv.B
	}
	// In place, growing as APPEND does (growString), the gap zero-filled.
	end := offset + int64(len(val))
	b := cur
	if end > int64(len(b)) {
		b = growString(b, int(end)-len(b))
		n := len(b)
		b = b[:end]
		clear(b[n:])
	}
	copy(b[offset:], val)
	if sv == nil {
		db.Set(string(args[1]), &store.String{B: b, Raw: true})
	} else {
		sv.B, sv.Raw, sv.NoInt = b, true, false // the TTL stays, as in Redis
	}
	c.touch(args[1])
	c.notify(notifyString, "setrange", args[1])
	return len(b), nil
}

func cmdGetdel(c *client, args [][]byte) (any, error) {
	sv, err := c.getString(args[1])
	if err != nil || sv == nil {
		return nil, err
	}
	c.keyspace().Delete(string(args[1]))
	c.touch(args[1])
	c.notify(notifyGeneric, "del", args[1])
	return sv.B, nil
}

func cmdGetex(c *client, args [][]byte) (any, error) {
	flags, expire, err := stringOpts(args, true)
	if err != nil {
		return nil, err
	}
	// The key is looked up before the time is checked, as in getexCommand.
	sv, err := c.getString(args[1])
	if err != nil || sv == nil {
		return nil, err
	}
	var at int64
	if expire != nil {
		if at, err = c.expireMs(expire, flags, "getex"); err != nil {
			return nil, err
		}
	}
	db := c.keyspace()
	k := string(args[1])
	switch {
	case flags&(strEXAT|strPXAT) != 0 && at <= c.s.store.NowMs():
		// An absolute time already past deletes the key (checkAlreadyExpired).
		db.Delete(k)
		c.touch(args[1])
		c.notify(notifyGeneric, "del", args[1])
	case expire != nil:
		db.Expire(k, at)
		c.touch(args[1])
		c.notify(notifyGeneric, "expire", args[1])
	case flags&strPersist != 0:
		if db.Persist(k) {
			c.touch(args[1])
			c.notify(notifyGeneric, "persist", args[1])
		}
	}
	return sv.B, nil
}

func cmdDecrby(c *client, args [][]byte) (any, error) {
	n, err := intArg(args[2])
	if err != nil {
		return nil, err
	}
	if n == math.MinInt64 {
		return nil, redisError("ERR decrement would overflow")
	}
	neg := strconv.AppendInt(nil, -n, 10)
	return cmdIncrBy(0, true)(c, [][]byte{args[0], args[1], neg})
}
