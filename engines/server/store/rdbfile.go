package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// Reading a whole RDB file (Redis's dump.rdb, versions 9 and 10: Redis 6.x and 7.0), to seed
// the server with what a real Redis saved. The per-key values go through the DUMP decoders
// (rdbReader.value), so the two paths accept the same encodings. The file is decoded completely
// before anything is loaded: a key of a type this server lacks (modules, zipmaps, Redis 7.2's
// encodings: Redis 6's ziplists and every sorted-set encoding are read, rdb_ziplist.go, rdb_zset.go), a module or function section,
// a bad checksum or a truncation refuses the whole file, never half of it.

// RDB file opcodes (rdb.h).
const (
	rdbOpFunction    = 0xF6 // pre-release 7.0 functions
	rdbOpFunction2   = 0xF5
	rdbOpModuleAux   = 0xF7
	rdbOpIdle        = 0xF8
	rdbOpFreq        = 0xF9
	rdbOpAux         = 0xFA
	rdbOpResizeDB    = 0xFB
	rdbOpExpireMs    = 0xFC
	rdbOpExpireSec   = 0xFD
	rdbOpSelectDB    = 0xFE
	rdbOpEOF         = 0xFF
	rdbMinFileVer    = 9
	rdbFileMagicSize = 9
)

// rdbTypeNames names every RDB object type, for refusals (rdb.h).
var rdbTypeNames = map[byte]string{
	0: "string", 1: "list (linked list encoding)", 2: "set", 3: "sorted set (zset)", 4: "hash",
	5: "sorted set (zset, type ZSET_2)", 6: "module value (MODULE)", 7: "module value (MODULE_2)",
	9: "hash (zipmap encoding)", 10: "list (ziplist encoding)", 11: "set (intset)",
	12: "sorted set (ziplist encoding)", 13: "hash (ziplist encoding)", 14: "list (quicklist of ziplists)",
	15: "stream (STREAM_LISTPACKS, Redis 6)", 16: "hash (listpack)", 17: "sorted set (listpack)",
	18: "list (quicklist of listpacks)", 19: "stream", 20: "set (listpack, Redis 7.2)",
	21: "stream (STREAM_LISTPACKS_3, Redis 7.2)",
}

// RDBKey is one key of an RDB file.
type RDBKey struct {
	DB    int
	Key   string
	Value any
	// ExpireAtMs is the key's expiry as a Unix time in milliseconds; 0 for none.
	ExpireAtMs int64
}

// RDBFileError is a file this server does not load, with the byte offset of the record at fault.
type RDBFileError struct {
	Offset int
	Msg    string
}

func (e *RDBFileError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// ReadRDBFile decodes an RDB file into its keys, in file order. Expired keys are returned with
// their expiry: dropping them is the loader's (it has the clock).
func ReadRDBFile(data []byte, lim RDBLimits) ([]RDBKey, error) {
	fail := func(off int, format string, args ...any) ([]RDBKey, error) {
		return nil, &RDBFileError{Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) < rdbFileMagicSize || string(data[:5]) != "REDIS" {
		return fail(0, "not an RDB file (no REDIS magic)")
	}
	ver, err := strconv.Atoi(string(data[5:9]))
	if err != nil || ver < rdbMinFileVer || ver > rdbVersion {
		return fail(5, "RDB version %q: this server reads versions %d and %d (Redis 6.x and 7.0)", data[5:9], rdbMinFileVer, rdbVersion)
	}
	r := &rdbReader{p: data[rdbFileMagicSize:]}
	offset := func() int { return len(data) - len(r.p) }
	var keys []RDBKey
	db := 0
	var expireAt int64
	for {
		at := offset()
		op := r.byte1()
		if r.bad {
			return fail(at, "truncated: the file ends before its EOF marker")
		}
		switch op {
		case rdbOpAux:
			r.str()
			r.str()
		case rdbOpSelectDB:
			n, enc := r.length()
			if !r.bad && (enc || n >= NumDBs) {
				return fail(at, "SELECTDB %d: this server has databases 0 to %d", n, NumDBs-1)
			}
			db = int(n)
		case rdbOpResizeDB:
			r.length()
			r.length()
		case rdbOpExpireMs:
			expireAt = r.le64()
		case rdbOpExpireSec:
			if b := r.take(4); !r.bad {
				expireAt = int64(binary.LittleEndian.Uint32(b)) * 1000
			}
		case rdbOpIdle:
			r.length()
		case rdbOpFreq:
			r.byte1()
		case rdbOpFunction, rdbOpFunction2:
			return fail(at, "the file holds a function library (FUNCTION LOAD): this server has no functions; FUNCTION FLUSH on the source and save again")
		case rdbOpModuleAux:
			return fail(at, "the file holds module data (MODULE_AUX): this server has no modules")
		case rdbOpEOF:
			end := offset()
			sum := r.take(8)
			if r.bad {
				return fail(end, "truncated: the checksum after EOF is missing")
			}
			// rdbchecksum no writes zero: nothing to verify, as Redis's load does.
			if want := binary.LittleEndian.Uint64(sum); want != 0 && want != CRC64(data[:end]) {
				return fail(end, "wrong CRC-64 checksum (the file is damaged)")
			}
			return keys, nil
		default:
			key := r.str()
			if r.bad {
				return fail(at, "truncated in a key name")
			}
			v, err := r.value(op, lim)
			switch {
			case errors.Is(err, ErrRDBUnsupported):
				name, ok := rdbTypeNames[op]
				if !ok {
					name = fmt.Sprintf("unknown type %d", op)
				}
				return fail(at, "key %q in db %d is a %s: this server has strings, lists, sets, hashes, sorted sets and streams; nothing was loaded", key, db, name)
			case err != nil:
				return fail(at, "key %q in db %d: bad or truncated value", key, db)
			}
			keys = append(keys, RDBKey{DB: db, Key: string(key), Value: v, ExpireAtMs: expireAt})
			expireAt = 0
		}
		if r.bad {
			return fail(at, "truncated or bad record (opcode %#x)", op)
		}
	}
}
