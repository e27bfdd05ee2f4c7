package store

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Writing a whole RDB file (version 10, what Redis 7.0's SAVE writes), so a dataset of this
// server can be loaded by redis-server: the magic, AUX fields (redis-ver 7.0.15, redis-bits,
// ctime, aof-base), for each database SELECTDB and RESIZEDB, each key with its expiry
// (EXPIRETIME_MS), type, name and object (the DUMP writers of rdb.go), EOF and the CRC-64 of
// everything before it. With lzf, names, values and listpacks are LZF-compressed as Redis's
// rdbcompression yes does. The file cannot be byte-identical to Redis's own (ctime, used-mem,
// hashtable order), but every value in it is written as Redis writes it.

// AppendRDBFile appends an RDB file holding keys, which must come grouped by database (in
// ascending order); ctime is the AUX ctime in Unix seconds.
func AppendRDBFile(b []byte, keys []RDBKey, ctime int64, lzf bool) ([]byte, error) {
	start := len(b)
	b = append(b, "REDIS0010"...)
	aux := func(k, v string) {
		b = rdbAppendStr(rdbAppendStr(append(b, rdbOpAux), []byte(k), lzf), []byte(v), lzf)
	}
	aux("redis-ver", "7.0.15")
	aux("redis-bits", "64")
	aux("ctime", strconv.FormatInt(ctime, 10))
	aux("aof-base", "0")
	var obj []byte
	for i := 0; i < len(keys); {
		db := keys[i].DB
		if db < 0 || db >= NumDBs || i > 0 && db < keys[i-1].DB {
			return b[:start], fmt.Errorf("store: RDB keys not grouped by database (db %d after %d)", db, keys[max(i-1, 0)].DB)
		}
		j, expires := i, 0
		for ; j < len(keys) && keys[j].DB == db; j++ {
			if keys[j].ExpireAtMs != 0 {
				expires++
			}
		}
		b = rdbAppendLen(append(b, rdbOpSelectDB), uint64(db))
		b = rdbAppendLen(rdbAppendLen(append(b, rdbOpResizeDB), uint64(j-i)), uint64(expires))
		for _, k := range keys[i:j] {
			var ok bool
			if obj, ok = appendRDBObject(obj[:0], k.Value, lzf); !ok {
				return b[:start], fmt.Errorf("store: key %q: no RDB encoding for a %s", k.Key, TypeName(k.Value))
			}
			if k.ExpireAtMs != 0 {
				b = binary.LittleEndian.AppendUint64(append(b, rdbOpExpireMs), uint64(k.ExpireAtMs))
			}
			b = rdbAppendStr(append(b, obj[0]), []byte(k.Key), lzf) // the type, then the name
			b = append(b, obj[1:]...)
		}
		i = j
	}
	b = append(b, rdbOpEOF)
	return binary.LittleEndian.AppendUint64(b, CRC64(b[start:])), nil
}
