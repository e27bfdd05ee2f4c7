package server

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// Differential tests of the string, hash, set and generic commands tools send around queues
// (issue 17): replies compared byte for byte with redis-server 7.0.15 in RESP2 and RESP3,
// errors, wrong types, encodings, TTLs. Random answers are compared only where Redis's answer
// is determined (a collection of one, or the whole collection).

const strhashStrings = `
	SETNX a 1
	SETNX a 2
	GET a
	SETNX
	SETEX e 100 v
	TTL e
	SETEX e 0 v
	SETEX e -1 v
	SETEX e x v
	SETEX e 9223372036854775807 v
	PSETEX p 100000 v
	~PTTL p
	PSETEX p 0 v
	PSETEX p 9223372036854775807 v
	SET s v EX 10 EX 20
	TTL s
	SET s v EX 10 PX 20
	SET s v KEEPTTL EX 10
	SET s v EX 10 KEEPTTL
	SET s v NX XX
	SET s v GET GET
	SET s v2 GET
	SET s v EX abc BAD
	SET s v EX abc
	SET s v EX 0
	SET s v PXAT 0
	SET s v EXAT 9223372036854775807
	SET s v EX 9223372036854775
	SET s v EXAT 4102444800
	EXPIRETIME s
	PEXPIRETIME s
	SET s v KEEPTTL
	EXPIRETIME s
	SET s v KEEPTTL KEEPTTL
	SET s v PERSIST
	LPUSH l x
	SET l v GET
	SET l v XX GET
	SET nokey v XX GET
	SET nokey v NX GET
	SET nokey v2 NX GET
	MSETNX m1 a m2 b
	MSETNX m2 c m3 d
	MGET m1 m2 m3
	MSETNX m4
	MSETNX m4 a m5
	APPEND ap 123
	OBJECT ENCODING ap
	APPEND ap 4
	OBJECT ENCODING ap
	GET ap
	SET ap2 abc
	OBJECT ENCODING ap2
	APPEND ap2 ""
	OBJECT ENCODING ap2
	OBJECT REFCOUNT ap
	APPEND l x
	STRLEN ap
	STRLEN nokey2
	STRLEN l
	SET n 12345
	STRLEN n
	GETRANGE n 1 2
	GETRANGE n -2 -1
	GETRANGE n -1 -2
	GETRANGE n 0 -100
	GETRANGE n -100 100
	GETRANGE n 3 1
	GETRANGE n 10 20
	GETRANGE n x 1
	GETRANGE nokey2 0 1
	GETRANGE l 0 1
	SUBSTR n 0 0
	SET empty ""
	GETRANGE empty 0 -1
	SETRANGE sr 5 hi
	GET sr
	OBJECT ENCODING sr
	SETRANGE sr 0 ""
	SETRANGE nosr 0 ""
	EXISTS nosr
	SETRANGE sr -1 x
	SETRANGE sr x x
	SETRANGE sr 536870911 xx
	SETRANGE sr 1 abcdefgh
	GET sr
	SET int 10
	SETRANGE int 1 5
	OBJECT ENCODING int
	GET int
	INCR int
	OBJECT ENCODING int
	SETRANGE l 0 x
	SET kt v EX 100
	APPEND kt x
	TTL kt
	SETRANGE kt 0 y
	TTL kt
	SETNX kt z
	SET kt2 v PX 1
	DEBUG SLEEP 0.01
	SETNX kt2 w
	GET kt2
	TTL kt2
	MSETNX kt2 a
	SET kt3 v EX 100
	GETDEL kt3
	TTL kt3
	GETDEL int
	GETDEL int
	GETDEL l
	SET g v EX 100
	GETEX g
	TTL g
	GETEX g PERSIST
	TTL g
	GETEX g EX 50
	TTL g
	GETEX g PX 50000 EX 20
	GETEX g EX 20 PERSIST
	GETEX g PERSIST EX 20
	GETEX g EX 0
	GETEX g EX x
	GETEX g KEEPTTL
	GETEX g NX
	GETEX g EXAT 4102444800
	EXPIRETIME g
	GETEX g PXAT 1000
	EXISTS g
	GETEX g
	GETEX l
	GETEX nokey3 EX 10
	SET d 10
	DECRBY d 3
	DECRBY d -3
	DECRBY d x
	DECRBY d -9223372036854775808
	DECRBY d 9223372036854775807
	DECRBY d2 5
	DECRBY l 1
	SET fl 1.5
	DECRBY fl 1
`

const strhashHashes = `
	HSET h a 1 b 2 c hello
	HMGET h a nof c
	HMGET noh a b
	HMGET h
	HLEN h
	HLEN noh
	HEXISTS h a
	HEXISTS h z
	HEXISTS noh a
	HKEYS h
	HVALS h
	HKEYS noh
	HVALS noh
	HSETNX h a 9
	HSETNX h d 4
	HSETNX nh2 f v
	HGETALL nh2
	HGETALL h
	HSTRLEN h c
	HSTRLEN h nof
	HSTRLEN noh f
	HINCRBYFLOAT h a 1.5
	HINCRBYFLOAT h a -0.5
	HINCRBYFLOAT h c 1
	HINCRBYFLOAT h a x
	HINCRBYFLOAT h a inf
	HINCRBYFLOAT ht a 1e400
	OBJECT ENCODING ht
	HINCRBYFLOAT hf n 3.0e3
	HINCRBYFLOAT hf n 0.1
	HINCRBYFLOAT hf n 0.2
	HGET hf n
	HSET hf big 1.7976931348623157e308
	HINCRBYFLOAT hf big 1.7976931348623157e308
	HRANDFIELD noh
	HRANDFIELD noh 3
	HRANDFIELD noh 3 WITHVALUES
	HRANDFIELD h 0
	HRANDFIELD h x
	HRANDFIELD h 1 WITHVAL
	HRANDFIELD h 1 WITHVALUES x
	HRANDFIELD h -9223372036854775808
	HRANDFIELD h -4611686018427387904 WITHVALUES
	HRANDFIELD h 10
	HRANDFIELD h 10 WITHVALUES
	HRANDFIELD nh2
	HRANDFIELD nh2 -3
	HRANDFIELD nh2 -2 WITHVALUES
	HRANDFIELD nh2 1 WITHVALUES
	HSCAN h 0
	HSCAN h 0 MATCH [ab]
	HSCAN h 0 COUNT 100 MATCH *
	HSCAN h 0 COUNT 0
	HSCAN h 0 COUNT x
	HSCAN h 0 MATCH
	HSCAN h 0 TYPE hash
	HSCAN h x
	HSCAN noh 0
	HSCAN noh 0 COUNT 0
	SET str x
	HMGET str a
	HLEN str
	HEXISTS str a
	HKEYS str
	HVALS str
	HSETNX str a b
	HSTRLEN str a
	HINCRBYFLOAT str a 1
	HRANDFIELD str
	HRANDFIELD str 1
	HSCAN str 0
	CONFIG SET hash-max-listpack-value 4
	HSETNX enc f short
	OBJECT ENCODING enc
	HSETNX enc g toolong
	OBJECT ENCODING enc
	HSET enc2 f 1
	HINCRBYFLOAT enc2 f 0.123456
	OBJECT ENCODING enc2
	CONFIG SET hash-max-listpack-value 64
`

const strhashSets = `
	SADD a 1 2 3 4
	SADD b 3 4 5
	SADD c 4 5 6 x
	SINTER a b
	SINTER a b c
	SINTER a nokey
	SINTER nokey a
	SUNION a b
	SUNION a nokey
	SUNION nokey
	SDIFF a b
	SDIFF a b c
	SDIFF nokey a
	SDIFF a a
	SET str v
	SINTER a str
	SINTER nokey str
	SUNION a str
	SDIFF nokey str
	SINTERSTORE d a b
	SMEMBERS d
	OBJECT ENCODING d
	SUNIONSTORE d a b
	SMEMBERS d
	SDIFFSTORE d a b
	SMEMBERS d
	SINTERSTORE d a nokey
	EXISTS d
	SET d v EX 100
	SUNIONSTORE d a
	TTL d
	TYPE d
	SDIFFSTORE d nokey
	EXISTS d
	SUNIONSTORE d str
	SINTERSTORE str a b
	TYPE str
	SUNIONSTORE u c
	OBJECT ENCODING u
	SCARD u
	SINTERSTORE d
	SMOVE a b 1
	SMEMBERS a
	SMEMBERS b
	SMOVE a b 3
	SMOVE a b 9
	SMOVE nokey b 1
	SMOVE a newset 2
	SMEMBERS newset
	SMOVE a a 4
	SMOVE a a 9
	SMOVE a newset 4
	EXISTS a
	SMOVE b str 3
	SET str2 v
	SMOVE str2 b 3
	SMOVE nokey str2 3
	SMOVE b s2 x
	OBJECT ENCODING s2
	SMISMEMBER b 3 9 5
	SMISMEMBER nokey 1 2
	SMISMEMBER str2 1
	SMISMEMBER b
	SSCAN b 0
	SSCAN b 0 MATCH 3*
	SSCAN b 0 COUNT 0
	SSCAN b x
	SSCAN nokey 0
	SSCAN str2 0
	SSCAN b 0 TYPE set
	SINTERCARD 2 a b
	SINTERCARD 1 a
	SINTERCARD 2 a b LIMIT 1
	SINTERCARD 2 a b LIMIT 0
	SINTERCARD 2 a b LIMIT -1
	SINTERCARD 2 a b LIMIT x
	SINTERCARD 2 a b LIMIT
	SINTERCARD 2 a b FOO 1
	SINTERCARD 0 a
	SINTERCARD -1 a
	SINTERCARD x a
	SINTERCARD 3 a b
	SINTERCARD 2 a nokey
	SINTERCARD 2 nokey str
	SINTERCARD 2 str nokey
	COMMAND GETKEYS SINTERCARD 2 a b LIMIT 1
	SADD one only
	SSCAN one 0
	SINTER one one
`

const strhashGeneric = `
	SET k v
	COPY k k2
	GET k2
	COPY k k2
	COPY k k2 REPLACE
	COPY k k
	COPY k k DB 1
	COPY nokey k3
	COPY k k3 DB 16
	COPY k k3 DB x
	COPY k k3 DB
	COPY k k3 BAD
	COPY k k3 DB 1 REPLACE
	SELECT 1
	GET k3
	SELECT 0
	SET i 123
	COPY i i2
	OBJECT ENCODING i2
	APPEND i 4
	COPY i i3
	OBJECT ENCODING i3
	SET t v EX 1000
	COPY t t2
	TTL t2
	RPUSH l a b c
	COPY l l2
	LRANGE l2 0 -1
	RPUSH l2 d
	LLEN l
	SADD s 1 2
	COPY s s2
	SMEMBERS s2
	OBJECT ENCODING s2
	HSET h f v
	COPY h h2
	HGETALL h2
	XADD x 1-1 a 1
	XGROUP CREATE x g 0
	XREADGROUP GROUP g c STREAMS x >
	COPY x x2
	XPENDING x2 g
	XINFO GROUPS x2
	XADD x2 2-1 b 2
	XLEN x
	TOUCH k nokey k2 k
	TOUCH nokey
	EXPIREAT k 4102444800
	EXPIRETIME k
	~PEXPIRETIME k
	TTL k
	EXPIREAT k 4102444800 NX
	EXPIREAT k 4102444801 GT
	EXPIREAT k 4102444700 LT
	EXPIRETIME k
	EXPIREAT k 100 XX BAD
	EXPIREAT k abc BAD
	EXPIREAT k abc
	EXPIREAT k 9223372036854775807
	EXPIREAT nokey 4102444800
	PEXPIREAT k 4102444800123
	PEXPIRETIME k
	EXPIRETIME k
	PEXPIREAT k 9223372036854775807
	PEXPIRETIME k
	EXPIREAT k 100
	EXISTS k
	EXPIRETIME nokey
	PEXPIRETIME nokey
	EXPIRETIME k2
	PEXPIRETIME k2
	EXPIRE k2 abc BAD
	EXPIRE k2 9223372036854775807
	PEXPIRE k2 9223372036854775807
	FLUSHALL
	RANDOMKEY
	SET only v
	RANDOMKEY
	ROLE
	ROLE x
	COMMAND GETKEYS GET k
	COMMAND GETKEYS MSET a 1 b 2
	COMMAND GETKEYS SET k
	COMMAND GETKEYS PING
	COMMAND GETKEYS PING x
	COMMAND GETKEYS GET
	COMMAND GETKEYS GET a b
	COMMAND GETKEYS XREAD STREAMS a b c
	COMMAND GETKEYS OBJECT
	COMMAND GETKEYS NOSUCH k
	COMMAND GETKEYS XREAD COUNT 1 STREAMS a b 0 0
	COMMAND GETKEYS XREAD STREAMS a
	COMMAND GETKEYS XREADGROUP GROUP g c STREAMS a 0
	COMMAND GETKEYS LMPOP 2 a b LEFT
	COMMAND GETKEYS BLMPOP 0 1 a LEFT
	COMMAND GETKEYS LMPOP 5 a LEFT
	COMMAND GETKEYS OBJECT ENCODING k
	COMMAND GETKEYS BLPOP a b 0
	COMMAND GETKEYS COPY a b
	COMMAND GETKEYS SINTERSTORE d a b
	COMMAND GETKEYS
	OBJECT ENCODING only
`

func TestDiffRedisStrHash(t *testing.T) {
	cases := []diffCase{
		{"strings", strhashStrings},
		{"strings-resp3", "HELLO 3\n" + strhashStrings},
		{"hashes", strhashHashes},
		{"hashes-resp3", "HELLO 3\n" + strhashHashes},
		{"sets", strhashSets},
		{"sets-resp3", "HELLO 3\n" + strhashSets},
		{"generic", strhashGeneric},
		{"generic-resp3", "HELLO 3\n" + strhashGeneric},
		{"copy-wakes-watch-sees", `
			@1& BLPOP dst 0
			RPUSH src a b
			COPY src dst
			@1 <
			LRANGE dst 0 -1
			@2 WATCH w1 w2 w3 w4 w5 w6
			SADD a 1
			SUNIONSTORE w1 a
			SMOVE a w2 1
			APPEND w3 x
			SETRANGE w4 1 x
			HSETNX w5 f v
			COPY w5 w6
			@2 MULTI
			@2 PING
			@2 EXEC
			@3 WATCH w1
			GETEX w1
			EXPIRETIME w1
			TOUCH w1
			@3 MULTI
			@3 PING
			@3 EXEC
		`},
		{"hash-hashtable-to-scan", func() string {
			// A hash past hash-max-listpack-entries converts on HSETNX too.
			var b strings.Builder
			b.WriteString("CONFIG SET hash-max-listpack-entries 3\nHSET g a 1 b 2 c 3\nOBJECT ENCODING g\n")
			b.WriteString("HSETNX g d 4\nOBJECT ENCODING g\nHLEN g\nCONFIG SET hash-max-listpack-entries 128\n")
			return b.String()
		}()},
	}
	// Each write touches the watched key (EXEC aborts) or not (EXEC runs), as in Redis.
	for _, w := range []string{
		"SETNX k v", "SETNX w v", "SETEX k 10 v", "PSETEX k 10000 v", "MSETNX k v", "MSETNX w v k v",
		"APPEND k x", "SETRANGE k 0 x", "SETRANGE k 0 \"\"", "GETDEL k", "GETDEL nokey", "GETEX k EX 100",
		"GETEX k", "GETEX w PERSIST", "DECRBY w 1", "COPY w k", "COPY k k2", "COPY k w REPLACE",
		"EXPIREAT k 4102444800", "PEXPIREAT k 1", "EXPIREAT k 4102444800 XX", "TOUCH k",
	} {
		cases = append(cases, diffCase{"watch " + w,
			"SET w 5\nSET k v\n@1 WATCH k\n" + w + "\n@1 MULTI\n@1 GET k\n@1 EXEC"})
	}
	for _, w := range []string{
		"HSETNX k f v", "HSETNX k a v", "HINCRBYFLOAT k a 1", "HMGET k a", "HRANDFIELD k", "HSCAN k 0",
		"SMOVE s k 1", "SMOVE s k 5", "SMOVE k s 1", "SINTERSTORE k s s", "SUNIONSTORE k nokey",
		"SDIFFSTORE k s s", "SMISMEMBER k 1", "SSCAN k 0",
	} {
		cases = append(cases, diffCase{"watch " + w,
			"HSET k a 1\nSADD s 1 2\n@1 WATCH k\n" + w + "\n@1 MULTI\n@1 TYPE k\n@1 EXEC"})
	}
	runDiffCases(t, cases)
}

// TestDiffRedisStrHashNotify: the keyspace events of the new commands, against redis-server.
func TestDiffRedisStrHashNotify(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{EnableDebugCommand: "yes"})
	script := []string{
		"SETNX a 1", "SETNX a 2", "SETEX b 100 v", "PSETEX c 100000 v", "MSETNX d 1 e 2", "MSETNX d 1 f 2",
		"APPEND g x", "APPEND g y", "SETRANGE h 2 z", "SETRANGE h 0 \"\"", "SETRANGE h 0 q", "GETDEL h", "GETDEL h",
		"GETEX b EX 10", "GETEX b PERSIST", "GETEX b PERSIST", "GETEX b PXAT 1", "DECRBY a 2",
		"SET t v", "SET t w EX 10 GET", "SET t x NX",
		"HSETNX hh f v", "HSETNX hh f w", "HINCRBYFLOAT hh n 1.5", "HINCRBYFLOAT hh f 1",
		"SADD s1 1 2", "SADD s2 2 3", "SMOVE s1 s2 1", "SMOVE s1 s3 2", "SMOVE s2 s2 3",
		"SINTERSTORE d1 s2 s3", "SUNIONSTORE d1 s2 s3", "SDIFFSTORE d1 s2 s2", "SDIFFSTORE d1 s2 s3",
		"COPY s2 c2", "COPY s2 c2 REPLACE", "COPY s2 c3 DB 1", "COPY nokey c4",
		"EXPIREAT c2 4102444800", "PEXPIREAT c2 4102444800000", "EXPIREAT c2 1", "TOUCH s2",
	}
	for _, tc := range []struct {
		name, flags string
		proto3      bool
	}{{"KEA", "KEA", false}, {"KEAn", "KEAn", true}, {"E$gsh", "E$gsh", false}} {
		t.Run(tc.name, func(t *testing.T) {
			we, wr := notifyTrace(t, realAddr, tc.flags, script, tc.proto3)
			ge, gr := notifyTrace(t, s.Addr(), tc.flags, script, tc.proto3)
			for i := range wr {
				if i >= len(gr) {
					t.Fatalf("only %d replies from qbench", len(gr))
				}
				if wr[i] != gr[i] {
					t.Errorf("reply to %q: redis %q, qbench %q", script[i], wr[i], gr[i])
				}
			}
			if len(we) < 20 {
				t.Fatalf("only %d events from redis-server: the trace is not watching", len(we))
			}
			if w, g := strings.Join(we, ""), strings.Join(ge, ""); w != g {
				t.Errorf("events differ:\n%s", sideBySide(we, ge))
			}
		})
	}
}

// TestDiffRedisRandomStrHash: random string, hash, set-algebra and generic commands of issue 17
// over a few shared keys in two databases (wrong types, copies and deadlines meet), some inside
// MULTI, RESP3 for even seeds. Set members are integers (intsets keep Redis's order), hashes
// stay listpacks, deadlines are absolute (EXPIREAT, EXAT) so both servers agree to the ms, and
// random answers are asked only for a whole collection.
func TestDiffRedisRandomStrHash(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
			key := func() string { return pick("s1", "s2", "h1", "h2", "k1", "k2") }
			member := func() string { return fmt.Sprint(r.Intn(10) - 2) }
			field := func() string { return pick("f1", "f2", "n") }
			num := func() string { return pick("1", "-3", "0", "x", "2.5", "") }
			at := func() string { return pick("4102444800", "4102444900", "1", "0", "x") }
			gens := []func() string{
				func() string { return fmt.Sprintf("SADD %s %s %s", key(), member(), member()) },
				func() string {
					return fmt.Sprintf("SET %s %s %s", key(), pick("1", "ab", "7"), pick("", "NX", "XX", "GET", "KEEPTTL", "EXAT "+at(), "PXAT "+at()+"000"))
				},
				func() string { return fmt.Sprintf("SETNX %s %s", key(), pick("1", "v")) },
				func() string { return fmt.Sprintf("MSETNX %s 1 %s 2", key(), key()) },
				func() string { return fmt.Sprintf("APPEND %s %s", key(), pick("1", "xy")) },
				func() string { return "STRLEN " + key() },
				func() string {
					return fmt.Sprintf("GETRANGE %s %s %s", key(), pick("0", "-2", "1"), pick("-1", "2", "0"))
				},
				func() string { return fmt.Sprintf("SETRANGE %s %s %s", key(), pick("0", "3", "-1"), pick("z", `""`)) },
				func() string { return "GETDEL " + key() },
				func() string {
					return fmt.Sprintf("GETEX %s %s", key(), pick("", "PERSIST", "EXAT "+at(), "PXAT "+at()+"000", "EX 0"))
				},
				func() string { return fmt.Sprintf("DECRBY %s %s", key(), num()) },
				func() string { return fmt.Sprintf("HMGET %s %s %s", key(), field(), field()) },
				func() string { return fmt.Sprintf("%s %s", pick("HLEN", "HKEYS", "HVALS"), key()) },
				func() string { return fmt.Sprintf("HEXISTS %s %s", key(), field()) },
				func() string { return fmt.Sprintf("HSETNX %s %s %s", key(), field(), pick("1", "v")) },
				func() string { return fmt.Sprintf("HSET %s %s %s", key(), field(), pick("1", "v", "1.5")) },
				func() string { return fmt.Sprintf("HSTRLEN %s %s", key(), field()) },
				func() string { return fmt.Sprintf("HINCRBYFLOAT %s %s %s", key(), field(), num()) },
				func() string { return fmt.Sprintf("HRANDFIELD %s %s", key(), pick("100", "100 WITHVALUES", "0")) },
				func() string { return fmt.Sprintf("HSCAN %s 0 %s", key(), pick("", "MATCH f*", "COUNT 0")) },
				func() string { return fmt.Sprintf("SMOVE %s %s %s", key(), key(), member()) },
				func() string {
					return fmt.Sprintf("%s %s %s", pick("SINTER", "SUNION", "SDIFF"), key(), key())
				},
				func() string {
					return fmt.Sprintf("%s %s %s %s", pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), key(), key(), key())
				},
				func() string { return fmt.Sprintf("SINTERCARD 2 %s %s", key(), key()) },
				func() string { return fmt.Sprintf("SMISMEMBER %s %s %s", key(), member(), member()) },
				func() string { return fmt.Sprintf("SSCAN %s 0 %s", key(), pick("", "MATCH 1*")) },
				func() string { return "SMEMBERS " + key() },
				func() string {
					return fmt.Sprintf("COPY %s %s %s", key(), key(), pick("", "REPLACE", "DB 1", "DB 1 REPLACE"))
				},
				func() string { return fmt.Sprintf("TOUCH %s %s", key(), key()) },
				func() string {
					return fmt.Sprintf("%s %s %s %s", pick("EXPIREAT", "PEXPIREAT"), key(), at(), pick("", "NX", "XX", "GT", "LT"))
				},
				func() string { return fmt.Sprintf("%s %s", pick("EXPIRETIME", "PEXPIRETIME"), key()) },
				func() string { return "OBJECT ENCODING " + key() },
				func() string { return "SELECT " + pick("0", "1") },
				func() string { return "DEL " + key() },
			}
			var lines []string
			if seed%2 == 0 {
				lines = append(lines, "HELLO 3")
			}
			lines = append(lines, randomCommands(r, gens, 1000)...)
			runDiff(t, realAddr, s.Addr(), lines)
		})
	}
}
