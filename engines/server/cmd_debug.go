package server

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// debugMore is the DEBUG subcommands that test suites and tools use, where they are cheap.
// ok is false for a subcommand the server does not have.
func debugMore(c *client, args [][]byte) (v any, err error, ok bool) {
	s := c.s
	sub, n := args[1], len(args)
	switch {
	case eq(sub, "set-active-expire") && n == 3:
		s.noActiveExpire = string(args[2]) == "0"
		return resp.OK, nil, true
	case eq(sub, "fork-fail") && n == 3:
		// qbench's own: background jobs fail as Redis's do when fork() fails (persist_forkfail.go).
		switch string(args[2]) {
		case "0", "1":
			s.p.forkFails = string(args[2]) == "1"
			return resp.OK, nil, true
		}
		return nil, redisError("ERR DEBUG FORK-FAIL takes 0 or 1"), true
	case eq(sub, "protocol") && n == 3:
		return debugProtocol(c, args[2]), nil, true
	case eq(sub, "error") && n == 3:
		return nil, redisError(args[2]), true
	case eq(sub, "log") && n == 3:
		s.logf("DEBUG LOG: %s", args[2])
		return resp.OK, nil, true
	case eq(sub, "change-repl-id") && n == 2:
		s.runID = randomHex(40)
		return resp.OK, nil, true
	case eq(sub, "quicklist-packed-threshold") && n == 3:
		if _, ok := memToBytes(string(args[2])); !ok {
			return nil, redisError("ERR argument must be a memory value bigger than 1 and smaller than 4gb"), true
		}
		return resp.OK, nil, true
	case eq(sub, "reload"):
		// Every value goes through the snapshot encoding and back, in memory: what a test
		// that reloads checks is that the data survives persistence unchanged.
		for _, db := range s.store.DBs {
			var keys []string
			var vals []any
			db.Keys(func(k string, v any) bool { keys, vals = append(keys, k), append(vals, v); return true })
			for i, k := range keys {
				nv, derr := store.DecodeDump(store.AppendDump(nil, vals[i]))
				if derr != nil {
					return nil, errorf("ERR Error trying to load the RDB dump: %v", derr), true
				}
				db.Set(k, s.reencode(nv))
			}
		}
		return resp.OK, nil, true
	case eq(sub, "digest") && n == 2:
		var sum [20]byte
		for i, db := range s.store.DBs {
			db.Keys(func(k string, v any) bool {
				xor20(&sum, digestKey(i, db, k, v))
				return true
			})
		}
		return resp.Simple(hex.EncodeToString(sum[:])), nil, true
	case eq(sub, "digest-value") && n >= 2:
		out := resp.Array{}
		for _, k := range args[2:] {
			var sum [20]byte
			if v := c.keyspace().Get(string(k)); v != nil {
				sum = sha1.Sum(store.AppendDump(nil, v))
			}
			out = append(out, resp.Simple(hex.EncodeToString(sum[:])))
		}
		return out, nil, true
	case eq(sub, "object") && n == 3:
		val := c.keyspace().Get(string(args[2]))
		if val == nil {
			return nil, errNoSuchKey, true
		}
		return resp.Simple("Value at:0x0 refcount:1 encoding:" + s.encodingOf(val) +
			" serializedlength:" + strconv.Itoa(len(store.AppendDump(nil, val))) + " lru:0 lru_seconds_idle:0"), nil, true
	}
	return nil, nil, false
}

// reencode gives a loaded value the encoding Redis gives it on load, by the current limits.
func (s *Server) reencode(v any) any {
	st := s.conf
	if z, ok := v.(*store.Zset); ok {
		return z.Reencode(st.zsetMaxListpackEntries, st.zsetMaxListpackValue)
	}
	return store.Reencode(v, st.setMaxIntsetEntries, st.hashMaxListpackEntries, st.hashMaxListpackValue)
}

// digestKey is one key's contribution to DEBUG DIGEST: its database, name, value and expiry.
func digestKey(db int, d *store.DB, k string, v any) [20]byte {
	b := strconv.AppendInt(nil, int64(db), 10)
	b = append(append(b, 0), k...)
	b = store.AppendDump(append(b, 0), v)
	if at, ok := d.ExpireAt(k); ok {
		b = strconv.AppendInt(append(b, 0), at, 10)
	}
	return sha1.Sum(b)
}

func xor20(dst *[20]byte, x [20]byte) {
	for i := range dst {
		dst[i] ^= x[i]
	}
}

// debugProtocol is DEBUG PROTOCOL <type>: a sample reply of each RESP type.
func debugProtocol(c *client, typ []byte) any {
	r3 := c.proto >= 3
	switch {
	case eq(typ, "string"):
		return "Hello World"
	case eq(typ, "integer"):
		return 12345
	case eq(typ, "double"):
		return resp.Double(3.141)
	case eq(typ, "bignum"):
		if r3 {
			return resp.Raw("(1234567999999999999999999999999999999\r\n")
		}
		return "1234567999999999999999999999999999999"
	case eq(typ, "null"):
		return nil
	case eq(typ, "array"):
		return resp.Array{0, 1, 2}
	case eq(typ, "set"):
		return resp.Set{0, 1, 2}
	case eq(typ, "map"):
		return resp.Map{0, resp.Bool(false), 1, resp.Bool(true), 2, resp.Bool(false)}
	case eq(typ, "attrib"):
		if r3 {
			return resp.Raw("|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n")
		}
		return "Some real reply following the attribute"
	case eq(typ, "push"):
		if !r3 {
			return redisError("ERR RESP2 is not supported by this command")
		}
		return resp.Raw(">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$40\r\nSome real reply following the push reply\r\n")
	case eq(typ, "true"):
		return resp.Bool(true)
	case eq(typ, "false"):
		return resp.Bool(false)
	case eq(typ, "verbatim"):
		return resp.Verbatim("This is a verbatim\nstring")
	}
	return redisError("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
}
