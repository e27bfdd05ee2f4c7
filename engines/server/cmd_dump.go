package server

import (
	"errors"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

// DUMP/RESTORE in Redis 7.0's payload format (store/rdb.go) for strings, lists, sets, hashes,
// sorted sets and streams, so keys move between Redis and this server.
var dumpCommands = []*command{
	{name: "dump", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Return a serialized version of the value stored at the specified key.", h: cmdDump},
	{name: "restore", arity: -4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, group: "generic", summary: "Create a key using the provided serialized value, previously obtained using DUMP.", h: cmdRestore},
}

func cmdDump(c *client, args [][]byte) (any, error) {
	v := c.keyspace().Get(string(args[1]))
	if v == nil {
		return nil, nil
	}
	b, ok := store.AppendRDBDump(nil, v, c.s.conf.rdbCompression)
	if !ok { // every type the server has is covered; this is for a future one
		return nil, errorf("ERR DUMP of a %s is not supported by this server", store.TypeName(v))
	}
	return b, nil
}

func cmdRestore(c *client, args [][]byte) (any, error) {
	var replace, absTTL bool
	idle, freq := false, false
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch {
		case eq(args[j], "replace"):
			replace = true
		case eq(args[j], "absttl"):
			absTTL = true
		case eq(args[j], "idletime") && more >= 1 && !freq:
			n, ok := parseInt(args[j+1])
			if !ok {
				return nil, errNotInteger
			}
			if n < 0 {
				return nil, redisError("ERR Invalid IDLETIME value, must be >= 0")
			}
			idle = true
			j++
		case eq(args[j], "freq") && more >= 1 && !idle:
			n, ok := parseInt(args[j+1])
			if !ok {
				return nil, errNotInteger
			}
			if n < 0 || n > 255 {
				return nil, redisError("ERR Invalid FREQ value, must be >= 0 and <= 255")
			}
			freq = true
			j++
		default:
			return nil, errSyntax
		}
	}
	db := c.keyspace()
	key := string(args[1])
	if !replace && db.Get(key) != nil {
		return nil, redisError("BUSYKEY Target key name already exists.")
	}
	ttl, ok := parseInt(args[2])
	if !ok {
		return nil, errNotInteger
	}
	if ttl < 0 {
		return nil, redisError("ERR Invalid TTL value, must be >= 0")
	}
	st := c.s.conf
	v, err := store.DecodeRDBDump(args[3], store.RDBLimits{
		IntsetMax: st.setMaxIntsetEntries, HashMaxEntries: st.hashMaxListpackEntries, HashMaxValue: st.hashMaxListpackValue,
		ZsetMaxEntries: st.zsetMaxListpackEntries, ZsetMaxValue: st.zsetMaxListpackValue,
		NodeMaxEntries: st.streamNodeMaxEntries, NodeMaxBytes: st.streamNodeMaxBytes,
		ListFill: store.ListFillOf(st.listMaxListpackSize)})
	switch {
	case errors.Is(err, store.ErrRDBChecksum):
		return nil, redisError("ERR DUMP payload version or checksum are wrong")
	case errors.Is(err, store.ErrRDBUnsupported):
		return nil, redisError("ERR Bad data format (this server restores strings, lists, sets, hashes, sorted sets and streams only)")
	case err != nil:
		return nil, redisError("ERR Bad data format")
	}
	deleted := replace && db.Delete(key)
	now := c.s.store.NowMs()
	if ttl > 0 && !absTTL {
		ttl += now
	}
	if ttl > 0 && ttl <= now {
		if deleted {
			c.touch(args[1])
			c.notify(notifyGeneric, "del", args[1])
		}
		return resp.OK, nil
	}
	db.SetClearTTL(key, v)
	c.keyAdded(args[1])
	c.s.signalKey(c.db, key)
	if ttl > 0 {
		db.Expire(key, ttl)
	}
	c.touch(args[1])
	c.notify(notifyGeneric, "restore", args[1])
	return resp.OK, nil
}
