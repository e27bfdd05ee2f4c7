package server

import (
	"fmt"
	"strings"
	"testing"
)

// diffCases are compatibility scripts (see diff_harness_test.go for the language). Each runs
// against a real redis-server and our server; replies must match byte for byte.
var diffCases = append(diffBaseCases, diffStreamCases...)

// diffCase is one compatibility script.
type diffCase struct {
	name   string
	script string
}

// diffBaseCases: generic, lists, blocking, transactions, connection and protocol; the stream
// cases are in diff_stream_cases_test.go.
var diffBaseCases = []diffCase{
	{"generic", `
		PING
		PING hello
		PING a b
		ECHO "hello world"
		ECHO
		SET k v
		GET k
		TYPE k
		TYPE nokey
		EXISTS k k nokey
		DEL k nokey
		DEL k
		DBSIZE
		SELECT 1
		SET k1 v
		DBSIZE
		SELECT 0
		DBSIZE
		SELECT 16
		SELECT -1
		SELECT x
		INCR n
		INCR n
		INCR k1
		SET big 9223372036854775807
		INCR big
		FLUSHDB
		FLUSHDB ASYNC
		FLUSHALL x
		UNLINK a b
	`},
	{"unknown-and-arity", `
		FOO
		FOO bar baz
		foo "a b" c
		GET
		GET a b
		LPUSH k
		XADD s
		XGROUP
		XGROUP FOO
		XGROUP CREATE s
		XINFO
		XINFO FOO x
		CLIENT
		CLIENT SETINFO LIB-NAME x
		CLIENT FOO
		CONFIG FOO
		CLIENT SETNAME
	`},
	{"expire", `
		SET k v
		TTL k
		PTTL nokey
		EXPIRE k 100
		TTL k
		EXPIRE k 100 NX
		EXPIRE k 200 XX
		EXPIRE k 50 GT
		EXPIRE k 50 LT
		EXPIRE k 10 NX XX
		EXPIRE k x
		PERSIST k
		PERSIST k
		TTL k
		EXPIRE k -1
		EXISTS k
		EXPIRE nokey 10
	`},
	{"set-options", `
		SET k v NX
		SET k v2 NX
		SET k v3 XX
		GET k
		SET k v4 GET
		SET k v EX 0
		SET k v EX 10 PX 10
		SET k v FOO
		SET k v KEEPTTL
		LPUSH l a
		SET l v GET
		GET l
	`},
	{"list-basic", `
		LPUSH l a b c
		RPUSH l d e
		LRANGE l 0 -1
		LRANGE l -2 -1
		LRANGE l 3 1
		LRANGE l 0 100
		LRANGE l -100 1
		LRANGE nokey 0 -1
		LRANGE l x 1
		LLEN l
		LLEN nokey
		LINDEX l 0
		LINDEX l -1
		LINDEX l 10
		LINDEX l x
		LSET l 0 z
		LSET l 10 z
		LSET nokey 0 z
		LSET l x z
		LRANGE l 0 -1
		LPUSHX nokey a
		RPUSHX nokey a
		LPUSHX l q
		RPUSHX l r
		LRANGE l 0 -1
	`},
	{"list-pop", `
		RPUSH l a b c d e f
		LPOP l
		RPOP l
		LPOP l 2
		RPOP l 0
		LPOP l -1
		LPOP l x
		LPOP l 1 2
		RPOP l 10
		EXISTS l
		LPOP l
		LPOP l 2
		RPOP nokey 3
		RPOP nokey
	`},
	{"list-edit", `
		RPUSH l a b c a b c a
		LREM l 2 a
		LRANGE l 0 -1
		LREM l -1 c
		LRANGE l 0 -1
		LREM l 0 b
		LRANGE l 0 -1
		LREM l x a
		LREM nokey 1 a
		LINSERT l BEFORE c X
		LINSERT l AFTER c Y
		LINSERT l AFTER nope Y
		LINSERT l MIDDLE c Y
		LINSERT nokey BEFORE a b
		LRANGE l 0 -1
		LTRIM l 1 -2
		LRANGE l 0 -1
		LTRIM l 5 1
		EXISTS l
		LTRIM nokey 0 1
		LTRIM l x 1
	`},
	{"list-lpos", `
		RPUSH l a b c 1 2 3 c c
		LPOS l c
		LPOS l c RANK 2
		LPOS l c RANK -1
		LPOS l c COUNT 0
		LPOS l c COUNT 2
		LPOS l c RANK -2 COUNT 2
		LPOS l c MAXLEN 2
		LPOS l c COUNT 0 MAXLEN 3
		LPOS l z
		LPOS l z COUNT 0
		LPOS l c RANK 0
		LPOS l c COUNT -1
		LPOS l c MAXLEN -1
		LPOS l c FOO
		LPOS l c RANK
		LPOS nokey c
		LPOS nokey c COUNT 1
	`},
	{"list-move", `
		RPUSH src a b c
		LMOVE src dst LEFT RIGHT
		LMOVE src dst RIGHT LEFT
		LMOVE src dst UP LEFT
		LRANGE src 0 -1
		LRANGE dst 0 -1
		RPOPLPUSH src dst
		EXISTS src
		RPOPLPUSH src dst
		LMOVE dst dst LEFT RIGHT
		LRANGE dst 0 -1
		SET str x
		RPOPLPUSH str dst
		RPOPLPUSH dst str
		LMOVE dst str LEFT LEFT
	`},
	{"list-mpop", `
		RPUSH a 1 2 3
		RPUSH b 4 5
		LMPOP 2 nokey a LEFT
		LMPOP 2 nokey a RIGHT COUNT 5
		LMPOP 2 a b LEFT COUNT 1
		LMPOP 1 nokey LEFT
		LMPOP 0 a LEFT
		LMPOP -1 a LEFT
		LMPOP x a LEFT
		LMPOP 3 a b LEFT
		LMPOP 2 a b MIDDLE
		LMPOP 2 a b LEFT COUNT 0
		LMPOP 2 a b LEFT COUNT -1
		LMPOP 2 a b LEFT COUNT 1 COUNT 1
		LMPOP 2 a b LEFT FOO
		BLMPOP 0.01 1 nokey LEFT
		BLMPOP x 1 nokey LEFT
		BLMPOP -1 1 nokey LEFT
		BLMPOP 0 1 b RIGHT COUNT 10
	`},
	{"list-wrongtype", `
		SET s v
		LPUSH s a
		RPUSH s a
		LPUSHX s a
		LPOP s
		RPOP s 2
		LLEN s
		LRANGE s 0 -1
		LINDEX s 0
		LSET s 0 a
		LINSERT s BEFORE a b
		LREM s 0 a
		LTRIM s 0 1
		LPOS s a
		LMOVE s d LEFT LEFT
		LMPOP 1 s LEFT
		BLPOP s 0.01
		BRPOP nokey s 0.01
		BLMOVE s d LEFT LEFT 0.01
		XADD s * a 1
		XLEN s
		XRANGE s - +
		XREAD STREAMS s 0
		XGROUP CREATE s g $
		XINFO STREAM s
		GET s
	`},
	{"blocking-timeouts", `
		BLPOP nokey 0.05
		BRPOP a b 0.01
		BLPOP a x
		BLPOP a -1
		BLPOP a 1.5x
		BLMOVE a b LEFT RIGHT 0.01
		BRPOPLPUSH a b 0.01
		RPUSH a 1
		BLPOP nokey a 0
		BRPOPLPUSH b a 0.01
		BLMOVE a b LEFT LEFT 0.01
	`},
	{"blocking-wake-order", `
		@1& BLPOP q 0
		@2& BLPOP q 0
		@3& BRPOP q2 q 0
		RPUSH q a b
		@1<
		@2<
		RPUSH q c
		@3<
		LLEN q
	`},
	{"blocking-multi-key", `
		@1& BLPOP a b 0
		@2& BLPOP b 0
		RPUSH b x
		@1<
		RPUSH b y
		@2<
	`},
	{"blocking-blmove", `
		@1& BLMOVE src dst LEFT RIGHT 0
		@2& BLPOP dst 0
		RPUSH src v
		@1<
		@2<
		EXISTS src dst
	`},
	{"blocking-lpush-many-served-once", `
		@1& BRPOP q 0
		@2& BRPOP q 0
		LPUSH q a b c
		@1<
		@2<
		LRANGE q 0 -1
	`},
	{"blocking-in-multi", `
		MULTI
		BLPOP nokey 0
		XREAD BLOCK 0 STREAMS nos $
		EXEC
	`},
	{"multi", `
		MULTI
		SET a 1
		INCR a
		LPUSH a x
		GET a
		EXEC
		MULTI
		MULTI
		DISCARD
		DISCARD
		EXEC
		MULTI
		SET a 2
		NOSUCHCMD
		GET
		EXEC
		GET a
		MULTI
		WATCH a
		EXEC
	`},
	{"hello-resp3", `
		HELLO 3
		XADD s 1 a 1
		XRANGE s - +
		XREAD STREAMS s 0
		XREAD STREAMS s 1
		XGROUP CREATE s g 0
		XREADGROUP GROUP g c STREAMS s >
		~XINFO GROUPS s
		XPENDING s g
		LPUSH l a
		BLPOP l 0
		BLPOP l 0.01
		LPOP nokey 2
		XINFO STREAM s
		HELLO 4
		HELLO x
		HELLO 3 FOO
		HELLO 2
		XREAD STREAMS s 0
	`},
	{"client", `
		CLIENT GETNAME
		CLIENT SETNAME foo
		CLIENT GETNAME
		CLIENT SETNAME "a b"
		CLIENT SETNAME ""
		CLIENT GETNAME
		CLIENT KILL 1.2.3.4:5
		CLIENT KILL ID 99999
		CLIENT KILL ID x
		CLIENT NO-EVICT on
		CLIENT NO-EVICT maybe
		CLIENT KILL TYPE pubsub
		CLIENT KILL TYPE master
		CLIENT KILL TYPE foo
		CLIENT KILL USER nobody
		CLIENT KILL USER default SKIPME yes
		CLIENT KILL MAXAGE 1000
		CLIENT KILL SKIPME maybe
		CLIENT KILL ID
	`},
	{"auth-without-password", `
		AUTH foo
		AUTH default foo
		AUTH a b c
	`},
	{"config", `
		CONFIG GET maxclients
		CONFIG GET stream-node-max-entries
		CONFIG GET nosuch
		CONFIG SET nosuch 1
		CONFIG SET stream-node-max-entries 10
		CONFIG GET stream-node-max-entries
		CONFIG SET stream-node-max-entries 100
		CONFIG GET appendonly
		CONFIG SET maxclients
	`},
	{"pubsub-resp2", `
		@1 SUBSCRIBE a b
		@2 PSUBSCRIBE a*
		PUBLISH a hello
		@1<
		@2<
		PUBLISH zz x
		PUBSUB NUMSUB a b c
		PUBSUB NUMPAT
		PUBSUB CHANNELS b*
		PUBSUB CHANNELS a*
		@1 GET x
		@1 PING
		@1 PING hi
		@1 UNSUBSCRIBE a
		@1 UNSUBSCRIBE
		@1 UNSUBSCRIBE
		@2 PUNSUBSCRIBE
		@2 GET x
	`},
	{"pubsub-resp3", `
		@1 HELLO 3
		@1 SUBSCRIBE a
		PUBLISH a hello
		@1<
		@1 GET x
		@1 PING
		@1 UNSUBSCRIBE
	`},
	{"inline", `
		RAW "PING\r\n"
		RAW "ECHO \"a b\\x41\"\r\n"
		RAW "\r\nPING\r\n"
		RAW "SET k 'it''s'\r\nGET k\r\n"
		GET k
	`},
	{"proto-error-quotes", `
		RAW "ECHO \"abc\r\n"
	`},
	{"proto-error-dollar", `
		RAW "*1\r\nx3\r\nfoo\r\n"
	`},
	{"proto-error-bulklen", `
		RAW "*1\r\n$-5\r\n"
	`},
	{"proto-error-mbulk", `
		RAW "*x\r\n"
	`},
	{"proto-error-bulk-big", `
		RAW "*1\r\n$536870913\r\n"
	`},
	{"proto-pipelined-before-error", `
		RAW "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n*a\r\n"
	`},
	{"blocking-blmpop-wake", `
		@1& BLMPOP 0 2 a b LEFT COUNT 2
		@2& BRPOPLPUSH a dst 0
		RPUSH b x y z
		@1<
		RPUSH a q
		@2<
		LRANGE dst 0 -1
		LRANGE b 0 -1
	`},
	// What the list consumers of engines/redisq send: a blocked BLMPOP with a COUNT beyond what
	// one variadic push brings takes all of it; a fractional timeout times out to a null.
	{"blocking-blmpop-count-beyond", `
		@1& BLMPOP 0 1 a RIGHT COUNT 100
		LPUSH a x y z
		@1<
		BLMPOP 0.01 1 a RIGHT COUNT 100
		LPUSH a p q
		BLMPOP 0.01 1 a RIGHT COUNT 100
		RPUSH a r s
		BLMPOP 0.01 1 a LEFT COUNT 1
		BLMPOP 0.01 1 a LEFT COUNT 100
	`},
	{"xread-block-multikey", `
		XADD s1 1 a 1
		@1& XREAD BLOCK 0 STREAMS s1 s2 $ $
		XADD s2 5 b 2
		@1<
		@1& XREAD COUNT 1 BLOCK 0 STREAMS s1 1-0
		XADD s1 2 c 3
		@1<
	`},
	{"xreadgroup-noack", `
		XGROUP CREATE s g $ MKSTREAM
		XADD s 1 a 1
		XREADGROUP GROUP g c NOACK STREAMS s >
		XPENDING s g
		@1& XREADGROUP GROUP g c NOACK BLOCK 0 STREAMS s >
		XADD s 2 a 1
		@1<
		XPENDING s g
		~XINFO CONSUMERS s g
	`},
	{"xreadgroup-setid-redeliver", `
		XGROUP CREATE s g $ MKSTREAM
		XADD s 1 a 1
		XADD s 2 a 1
		XREADGROUP GROUP g c1 STREAMS s >
		XGROUP SETID s g 0
		XREADGROUP GROUP g c2 COUNT 1 STREAMS s >
		~XPENDING s g - + 10
		XREADGROUP GROUP g c1 STREAMS s 0
		XGROUP DELCONSUMER s g c2
		XPENDING s g
	`},
	{"xadd-nomkstream-trim", `
		XADD s NOMKSTREAM MAXLEN 1 * a 1
		EXISTS s
		XADD s 1 a 1
		XADD s NOMKSTREAM MAXLEN 1 2 a 1
		XADD s NOMKSTREAM MINID = 3 3 a 1
		XRANGE s - +
	`},
	{"pubsub-pattern-and-channel", `
		@1 SUBSCRIBE news
		@1 PSUBSCRIBE n*
		PUBLISH news hi
		@1<
		@1<
		@1 PUNSUBSCRIBE n* x*
		@1 RESET
		@1 GET k
		PUBLISH news again
	`},
	{"hello-setname", `
		HELLO 2 SETNAME app
		CLIENT GETNAME
		HELLO 3 SETNAME "bad name"
		CLIENT GETNAME
	`},
	{"quit", `
		PING
		QUIT
	`},
	{"type-after-ops", `
		XADD s 1 a 1
		TYPE s
		RPUSH l a
		TYPE l
		SET k v
		TYPE k
		XDEL s 1
		TYPE s
		LPOP l
		TYPE l
	`},
	{"blocking-then-pipelined", `
		@1& RAW "BLPOP k 0\r\nPING\r\nLLEN k\r\n"
		RPUSH k a b
		@1<
		@1<
		@1<
	`},
	{"blocking-timeout-then-pipelined", `
		RAW "BLPOP k 0.05\r\nPING\r\n"
		@0<
	`},
	{"misc", `
		TIME x
		DEBUG FOO
		DEBUG SLEEP 0
		WAIT 0 0
		WAIT x 0
		COMMAND FOO
		MEMORY USAGE nokey
		KEYS *
		SET foo 1
		SET foobar 1
		KEYS foob*
		KEYS f?o
		KEYS [a-f]oo
		SCAN 0 MATCH foo
		SCAN x
		SCAN 0 COUNT 0
	`},
}

func TestDiffRedis(t *testing.T) {
	runDiffCases(t, diffCases)
}

// TestDiffRedisStreamNodes checks that node boundaries (stream-node-max-entries and
// stream-node-max-bytes) match Redis's, through XINFO STREAM's radix-tree-keys and through
// approximate trimming, which removes whole nodes only.
func TestDiffRedisStreamNodes(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	gen := func(n, valueLen int, trim string, mixed bool) []string {
		var lines []string
		v := strings.Repeat("v", valueLen)
		for i := 1; i <= n; i++ {
			f := fmt.Sprintf("f1 %s f2 %d f3 x", v, i)
			if mixed && i%7 == 0 {
				f = fmt.Sprintf("other %s", v)
			}
			lines = append(lines, fmt.Sprintf("XADD s %s %d-%d %s", trim, i, i%3, f))
		}
		return append(lines, "XLEN s", "XINFO STREAM s", "XRANGE s - + COUNT 3", "XREVRANGE s + - COUNT 3")
	}
	cases := []struct {
		name  string
		lines []string
	}{
		{"small-values", gen(450, 1, "", false)},
		{"byte-limit", gen(300, 100, "", false)},
		{"big-values", gen(40, 5000, "", false)},
		{"mixed-fields", gen(450, 3, "", true)},
		{"maxlen-approx", gen(1000, 2, "MAXLEN ~ 150", false)},
		{"maxlen-approx-bytes", gen(600, 90, "MAXLEN ~ 77", false)},
		{"maxlen-exact", gen(300, 2, "MAXLEN 120", false)},
		{"minid-approx", append(gen(500, 2, "", false), "XTRIM s MINID ~ 333", "XLEN s", "XTRIM s MINID 333", "XLEN s", "XINFO STREAM s")},
		{"limit", append(gen(500, 2, "", false), "XTRIM s MAXLEN ~ 0 LIMIT 150", "XLEN s", "XTRIM s MAXLEN ~ 0 LIMIT 99", "XLEN s", "XTRIM s MAXLEN ~ 0", "XLEN s")},
		{"xdel-then-append", append(gen(150, 2, "", false), "XDEL s 100-1 101-2", "XTRIM s MAXLEN 50", "XADD s 2000-0 a 1", "XINFO STREAM s", "XTRIM s MAXLEN ~ 10", "XLEN s")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runDiff(t, realAddr, s.Addr(), tc.lines) })
	}
}

func TestDiffRedisWatch(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	cases := []diffCase{
		{"modified", "WATCH k\n@1 SET k v\nMULTI\nGET k\nEXEC\nGET k"},
		{"untouched", "WATCH k\nMULTI\nSET k 2\nEXEC\nGET k"},
		{"list-push", "WATCH l\n@1 LPUSH l a\nMULTI\nLLEN l\nEXEC"},
		{"noop-pop", "WATCH l\n@1 LPOP l\nMULTI\nPING\nEXEC"},
		{"xadd", "WATCH s\n@1 XADD s 1 a 1\nMULTI\nXLEN s\nEXEC"},
		{"other-db", "WATCH k\n@1 SELECT 1\n@1 SET k v\nMULTI\nPING\nEXEC"},
		{"unwatch", "WATCH k\n@1 SET k v\nUNWATCH\nMULTI\nPING\nEXEC"},
		{"discard-unwatches", "WATCH k\nMULTI\nDISCARD\n@1 SET k v\nMULTI\nPING\nEXEC"},
		{"flushall", "SET k v\nWATCH k\n@1 FLUSHALL\nMULTI\nPING\nEXEC"},
		{"flushall-missing-key", "WATCH k\n@1 FLUSHALL\nMULTI\nPING\nEXEC"},
		{"own-write", "WATCH k\nSET k v\nMULTI\nPING\nEXEC"},
		{"in-multi", "MULTI\nWATCH k\nEXEC"},
		{"resp3-null", "HELLO 3\nWATCH k\n@1 SET k v\nMULTI\nPING\nEXEC"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runDiff(t, realAddr, s.Addr(), strings.Split(tc.script, "\n")) })
	}
}

// TestDiffRedisArity sends every command in the table, and every subcommand, with no
// arguments and with one argument too many for fixed-arity commands, and compares errors.
func TestDiffRedisArity(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	// Commands whose successful reply legitimately differs (server facts, times, ids) or
	// that end the connection or server.
	skip := map[string]bool{"shutdown": true, "quit": true, "info": true, "command": true, "time": true,
		"lastsave": true, "hello": true, "client|list": true, "client|info": true, "client|id": true,
		"memory|stats": true, "command|count": true, "command|list": true, "command|docs": true,
		"command|info": true, "command|help": true, "config|help": true, "client|help": true,
		"memory|help": true, "pubsub|help": true, "function|help": true, "config|rewrite": true, "config|resetstat": true,
		"multi": true, "waitaof": true, "subscribe": true, "psubscribe": true, "unsubscribe": true, "punsubscribe": true}
	// Commands whose bare call starts background work whose reply to the next such call depends
	// on whether the first has finished (BGSAVE while a BGREWRITEAOF still runs: "Another child
	// process is active" here under load, "Background saving started" from a faster Redis):
	// only their arity errors are compared.
	bareSkip := map[string]bool{"bgrewriteaof": true, "bgsave": true}
	var lines []string
	add := func(cmd *command, words []string) {
		if skip[cmd.fullname] {
			return
		}
		if !bareSkip[cmd.fullname] {
			lines = append(lines, strings.Join(words, " "))
		}
		if cmd.arity > 0 {
			extra := append(append([]string{}, words...), make([]string, cmd.arity-len(words)+1)...)
			for i := len(words); i < len(extra); i++ {
				extra[i] = "x"
			}
			lines = append(lines, strings.Join(extra, " "))
		}
	}
	for _, name := range sortedCommandNames() {
		cmd := commandTable[name]
		add(cmd, []string{name})
		for _, sub := range cmd.subs {
			add(sub, []string{name, sub.name})
		}
	}
	runDiff(t, realAddr, s.Addr(), lines)
}
