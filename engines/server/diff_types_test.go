package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestDiffRedisSetsHashes: sets and hashes, reply shapes in RESP2 and RESP3, errors, wrong
// types, encodings by size. Random members are compared only where Redis's answer is
// determined (the whole set, or a set of one).
func TestDiffRedisSetsHashes(t *testing.T) {
	sets := `
		SADD s 3 1 2 2
		SADD s 1
		SMEMBERS s
		SCARD s
		SISMEMBER s 2
		SISMEMBER s x
		SISMEMBER nos 1
		OBJECT ENCODING s
		SADD s -5 10
		SMEMBERS s
		SREM s 1 7 2
		SMEMBERS s
		SRANDMEMBER s 10
		SRANDMEMBER s 0
		SRANDMEMBER nos
		SRANDMEMBER nos 3
		SRANDMEMBER s x
		SRANDMEMBER s 1 2
		SPOP nos
		SPOP nos 2
		SPOP s 0
		SPOP s -1
		SPOP s x
		SPOP s 1 2
		SPOP s 10
		EXISTS s
		SADD one only
		SMEMBERS one
		OBJECT ENCODING one
		SRANDMEMBER one
		SRANDMEMBER one -3
		SPOP one
		EXISTS one
		SADD big 00 1
		OBJECT ENCODING big
		SADD neg -0
		OBJECT ENCODING neg
		SREM nos a
		SCARD nos
		SMEMBERS nos
		SET str x
		SADD str a
		SREM str a
		SMEMBERS str
		SISMEMBER str a
		SCARD str
		SRANDMEMBER str
		SPOP str
		TYPE s
		SADD s2 a
		TYPE s2
		SREM s2 a
		EXISTS s2
		CONFIG SET set-max-intset-entries 3
		SADD t 1 2 3
		OBJECT ENCODING t
		SADD t 4
		OBJECT ENCODING t
		SREM t 4 3
		OBJECT ENCODING t
		CONFIG SET set-max-intset-entries 512
	`
	hashes := `
		HSET h f1 v1 f2 v2
		HSET h f1 x f3 v3
		HGETALL h
		HGET h f1
		HGET h nof
		HGET noh f
		HGETALL noh
		HSET h f
		HMSET h a 1 b 2
		HMSET h a
		HGETALL h
		HDEL h f2 nof b
		HGETALL h
		HDEL noh f
		HINCRBY h n 5
		HINCRBY h n -7
		HINCRBY h f1 1
		HINCRBY h n x
		HINCRBY h n 9223372036854775807
		HSET h m 9223372036854775807
		HINCRBY h m 1
		HINCRBY nh f 3
		HGETALL nh
		OBJECT ENCODING h
		HSET long f 01234567890123456789012345678901234567890123456789012345678901234
		OBJECT ENCODING long
		HDEL h f1 f3 a n m
		EXISTS h
		SET str x
		HSET str a b
		HGET str a
		HGETALL str
		HDEL str a
		HINCRBY str a 1
		TYPE nh
		CONFIG SET hash-max-listpack-entries 2
		HSET small a 1 b 2
		OBJECT ENCODING small
		HSET small c 3
		OBJECT ENCODING small
		HDEL small c b
		OBJECT ENCODING small
		HGETALL small
		CONFIG SET hash-max-ziplist-entries 512
		CONFIG GET hash-max-listpack-entries
	`
	cases := []diffCase{
		{"sets", sets},
		{"sets-resp3", "HELLO 3\n" + sets},
		{"hashes", hashes},
		{"hashes-resp3", "HELLO 3\n" + hashes},
		{"set-grows-to-hashtable", func() string {
			var b strings.Builder
			for i := 0; i < 520; i++ {
				fmt.Fprintf(&b, "SADD g %d\n", i)
				if i%100 == 0 || i >= 510 {
					b.WriteString("OBJECT ENCODING g\n")
				}
			}
			return b.String() + "SCARD g\nSISMEMBER g 511\nSISMEMBER g 600"
		}()},
		{"hash-grows-to-hashtable", func() string {
			var b strings.Builder
			for i := 0; i < 515; i++ {
				fmt.Fprintf(&b, "HSET g f%d %d\n", i, i)
				if i >= 510 {
					b.WriteString("OBJECT ENCODING g\n")
				}
			}
			return b.String() + "HGET g f513\nHDEL g f1\nOBJECT ENCODING g"
		}()},
	}
	runDiffCases(t, cases)
}

// TestDiffRedisStringsKeys: MSET MGET GETSET INCRBYFLOAT RENAME RENAMENX MOVE SWAPDB OBJECT,
// FUNCTION, CONFIG aliases.
func TestDiffRedisStringsKeys(t *testing.T) {
	strs := `
		MSET a 1 b 2 c 3
		MGET a b c nokey
		MSET a
		MSET a 1 b
		LPUSH l x
		MGET a l
		GETSET a 10
		GETSET new v
		GETSET l v
		SET ttl v EX 100
		GETSET ttl w
		TTL ttl
		SET ttl v EX 100
		MSET ttl w
		TTL ttl
		INCRBYFLOAT f 10.5
		INCRBYFLOAT f 0.1
		INCRBYFLOAT f -5
		INCRBYFLOAT f 3.0e3
		INCRBYFLOAT f 1.5e-3
		INCRBYFLOAT g 0.1
		INCRBYFLOAT g 0.2
		INCRBYFLOAT h 5.0e3
		INCRBYFLOAT h 2.0e2
		INCRBYFLOAT h x
		INCRBYFLOAT h " 1"
		INCRBYFLOAT h inf
		INCRBYFLOAT h 1e400
		INCRBYFLOAT l 1
		SET s abc
		INCRBYFLOAT s 1
		SET z 1
		INCRBYFLOAT z -1
		OBJECT ENCODING z
		INCRBYFLOAT z 1.5
		SET e 17
		EXPIRE e 100
		INCRBYFLOAT e 1
		TTL e
		GET e
		INCRBYFLOAT n 1e10
		INCRBYFLOAT n -1e-10
		INCRBYFLOAT n2 123456789012345678
		OBJECT ENCODING a
		OBJECT ENCODING s
		OBJECT ENCODING f
		OBJECT ENCODING l
		OBJECT ENCODING nokey
		SET big 12345678901234567890
		OBJECT ENCODING big
		SET neg -42
		OBJECT ENCODING neg
		SET lead 007
		OBJECT ENCODING lead
		SET e44 01234567890123456789012345678901234567890123
		OBJECT ENCODING e44
		SET e45 012345678901234567890123456789012345678901234
		OBJECT ENCODING e45
		INCR cnt
		OBJECT ENCODING cnt
		XADD x 1-1 a 1
		OBJECT ENCODING x
		OBJECT REFCOUNT a
		OBJECT REFCOUNT s
		OBJECT REFCOUNT big
		OBJECT REFCOUNT nokey
		OBJECT FREQ s
		OBJECT FREQ nokey
		OBJECT IDLETIME nokey
		OBJECT ENCODING
		OBJECT ENCODING a b
		OBJECT FOO a
		OBJECT HELP
	`
	keys := `
		SET a 1
		RENAME a b
		GET b
		EXISTS a
		RENAME nokey x
		RENAME b b
		RENAME nokey nokey
		RENAMENX b b
		SET c 3
		RENAMENX b c
		RENAMENX b d
		RENAME d c
		GET c
		SET t v PX 100000
		RENAME t t2
		~PTTL t2
		RPUSH l a b
		RENAME l l2
		LRANGE l2 0 -1
		MOVE l2 1
		MOVE l2 1
		EXISTS l2
		SELECT 1
		LRANGE l2 0 -1
		SET l2 x
		SELECT 0
		RPUSH l2 y
		MOVE l2 1
		MOVE l2 0
		MOVE l2 16
		MOVE l2 -1
		MOVE l2 x
		MOVE nokey 1
		SET mt v EX 1000
		MOVE mt 2
		SELECT 2
		TTL mt
		SELECT 0
		SET sw 0
		SELECT 3
		SET sw 3
		SWAPDB 0 3
		GET sw
		SELECT 0
		GET sw
		SWAPDB 0 0
		SWAPDB 0 16
		SWAPDB x 1
		SWAPDB 1 x
		SWAPDB -1 1
		SWAPDB 0
		DBSIZE
	`
	harness := `
		SELECT 9
		FLUSHALL
		FUNCTION FLUSH
		FUNCTION FLUSH ASYNC
		FUNCTION FLUSH SYNC
		FUNCTION FLUSH x
		FUNCTION LIST
		FUNCTION LIST LIBRARYNAME x
		FUNCTION LIST WITHCODE
		FUNCTION FOO
		FUNCTION
		CONFIG GET rdbcompression
		CONFIG SET rdbcompression maybe
		CONFIG SET rdbcompression NO
		CONFIG GET rdbcompression
		CONFIG SET rdbcompression yes
		CONFIG GET rdbcompression
		CONFIG SET list-max-ziplist-size 4
		CONFIG GET list-max-listpack-size
		CONFIG GET list-max-ziplist-size
		CONFIG SET list-max-listpack-size -2
		CONFIG GET list-max-ziplist-size
		CONFIG SET list-max-ziplist-size x
		CONFIG SET hash-max-ziplist-value 32
		CONFIG GET hash-max-listpack-value
		CONFIG SET hash-max-ziplist-value 64
		CONFIG SET zset-max-ziplist-entries 100
		CONFIG GET zset-max-listpack-entries
		CONFIG SET zset-max-ziplist-entries 128
		CONFIG SET zset-max-ziplist-value 64
		CONFIG SET slave-read-only yes
		CONFIG GET replica-read-only
		CONFIG GET slave-read-only
		CONFIG SET min-slaves-to-write 0
		CONFIG GET min-replicas-to-write
		CONFIG SET min-slaves-max-lag 10
		CONFIG SET slave-serve-stale-data yes
		CONFIG SET slave-priority 100
		CONFIG GET replica-priority
		CONFIG SET repl-ping-slave-period 10
		CONFIG SET slave-lazy-flush no
		CONFIG SET slave-ignore-maxmemory yes
		CONFIG SET lua-time-limit 5000
		CONFIG GET busy-reply-threshold
		CONFIG GET lua-time-limit
		CONFIG GET slaveof
		CONFIG GET replicaof
		CONFIG SET slaveof "127.0.0.1 1"
		CONFIG SET replicaof "127.0.0.1 1"
		CONFIG GET cluster-slave-validity-factor
		CONFIG GET slave-announce-port
		CONFIG GET repl-ping-slave-period
		CONFIG SET set-max-intset-entries 512
		CONFIG GET set-max-intset-entries
		RPUSH l a b c d e f
		OBJECT ENCODING l
	`
	runDiffCases(t, []diffCase{
		{"strings", strs},
		{"strings-resp3", "HELLO 3\n" + strs},
		{"keys", keys},
		{"harness", harness},
		{"harness-resp3", "HELLO 3\n" + harness},
	})
}

func TestDiffRedisFunction(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"function", `
			FUNCTION LIST LIBRARYNAME
			FUNCTION LIST FOO
			FUNCTION DELETE x
			FUNCTION KILL
			FUNCTION FLUSH a b
			MULTI
			FUNCTION FLUSH
			EXEC
			INCRBYFLOAT f 1e5000
			INCRBYFLOAT f 1e-5000
			INCRBYFLOAT f 1e4000
			INCRBYFLOAT f 1e4000
			INCRBYFLOAT g 1.1
			INCRBYFLOAT g 1e-4000`},
	})
}
