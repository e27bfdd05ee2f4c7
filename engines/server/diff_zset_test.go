package server

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestDiffRedisZsets: sorted sets against redis-server, replies compared exactly in RESP2 and
// RESP3 (scores are doubles there): options and every error of ZADD, ranges by rank, score and
// lex, pops, removals, encodings by size, wrong types. ZRANDMEMBER only where Redis's answer
// is determined (the whole zset, a zset of one, errors).
func TestDiffRedisZsets(t *testing.T) {
	zadd := `
		ZADD z 1 a 2 b 3 c
		ZADD z 1 a
		ZADD z CH 5 a 2 b 9 d
		ZADD z NX 100 a 7 e
		ZADD z XX 100 a 8 f
		ZADD z XX CH 0 a
		ZADD z GT CH 1 a 50 b
		ZADD z LT CH 60 b 1 c
		ZADD z XX GT 70 b
		ZADD z NX XX 1 a
		ZADD z NX GT 1 a
		ZADD z GT LT 1 a
		ZADD z LT NX 1 a
		ZADD z INCR 1 a 2 b
		ZADD z INCR 5 a
		ZADD z INCR NX 5 a
		ZADD z INCR XX 5 nope
		ZADD z INCR GT -1 a
		ZADD z INCR LT -1 a
		ZADD z 1
		ZADD z 1 a 2
		ZADD z x a
		ZADD z nan a
		ZADD z 1 a x b
		ZADD z inf i -inf j +inf k
		ZADD z 1.5 f1 0.1 f2 1e300 f3 -0 f4 1e-7 f5 123456789012345678 f6
		ZSCORE z f1
		ZSCORE z f2
		ZSCORE z f3
		ZSCORE z f4
		ZSCORE z f5
		ZSCORE z f6
		ZSCORE z i
		ZSCORE z j
		ZSCORE z nope
		ZSCORE noz a
		ZMSCORE z a nope i f2
		ZMSCORE noz a b
		ZADD z INCR inf i
		ZADD z INCR -inf i
		ZINCRBY z -inf i
		ZINCRBY z 1 newm
		ZINCRBY z x a
		ZINCRBY z 2.5 a
		ZINCRBY noz2 3 m
		ZRANGE z 0 -1 WITHSCORES
		ZCARD z
		ZCARD noz
		ZADD xx XX 1 a
		EXISTS xx
		ZINCRBY z nan a
		ZADD z 1 a 2 b 3 c 4 d 5 e
	`
	ranges := `
		ZADD z 1 a 2 b 3 c 4 d 5 e 5 ee 6 f
		ZRANGE z 0 -1
		ZRANGE z 0 -1 WITHSCORES
		ZRANGE z 2 3 withscores
		ZRANGE z -2 -1
		ZRANGE z -100 100
		ZRANGE z 5 2
		ZRANGE z 10 20
		ZRANGE z 0 -1 REV WITHSCORES
		ZRANGE z 1 2 REV
		ZRANGE z x 1
		ZRANGE z 0 1 LIMIT 0 1
		ZRANGE z 0 1 FOO
		ZRANGE z 2 5 BYSCORE
		ZRANGE z (2 5 BYSCORE WITHSCORES
		ZRANGE z 2 (5 BYSCORE
		ZRANGE z -inf +inf BYSCORE LIMIT 1 3
		ZRANGE z -inf +inf BYSCORE LIMIT 1 -1
		ZRANGE z -inf +inf BYSCORE LIMIT -1 2
		ZRANGE z -inf +inf BYSCORE LIMIT 0 0
		ZRANGE z -inf +inf BYSCORE LIMIT 100 1
		ZRANGE z 5 2 BYSCORE REV WITHSCORES
		ZRANGE z (5 (2 BYSCORE REV LIMIT 1 1
		ZRANGE z 3 3 BYSCORE
		ZRANGE z (3 3 BYSCORE
		ZRANGE z x 3 BYSCORE
		ZRANGE z nan 3 BYSCORE
		ZRANGE z ( 3 BYSCORE
		ZRANGEBYSCORE z "" 3
		ZCOUNT z "(" ""
		ZRANGE z 1 2 BYSCORE BYLEX
		ZRANGE z 1 2 BYSCORE LIMIT 1
		ZRANGE z 1 2 BYSCORE LIMIT x 1
		ZRANGE z 1 2 BYSCORE LIMIT 1 y
		ZRANGE z 0 -1 REV REV
		ZRANGEBYSCORE z 2 5
		ZRANGEBYSCORE z -inf inf WITHSCORES LIMIT 2 2
		ZRANGEBYSCORE z 2 5 REV
		ZRANGEBYSCORE z 2 5 BYSCORE
		ZREVRANGEBYSCORE z 5 2 WITHSCORES
		ZREVRANGEBYSCORE z 2 5
		ZREVRANGEBYSCORE z +inf -inf LIMIT 0 2
		ZREVRANGE z 0 2 WITHSCORES
		ZREVRANGE z 0 2 LIMIT 0 1
		ZREVRANGE z -1 -1
		ZCOUNT z 2 5
		ZCOUNT z (2 (5
		ZCOUNT z -inf +inf
		ZCOUNT z 5 2
		ZCOUNT z x 2
		ZCOUNT noz 1 2
		ZRANK z a
		ZRANK z ee
		ZRANK z nope
		ZRANK noz a
		ZREVRANK z a
		ZREVRANK z f
		DEL z
		ZADD l 0 a 0 b 0 c 0 d 0 e 0 f 0 g
		ZRANGE l - + BYLEX
		ZRANGE l [b (e BYLEX
		ZRANGE l (b [e BYLEX LIMIT 1 2
		ZRANGE l [e [b BYLEX REV
		ZRANGE l + - BYLEX REV LIMIT 0 3
		ZRANGE l - + BYLEX WITHSCORES
		ZRANGE l a b BYLEX
		ZRANGEBYLEX l - [c
		ZRANGEBYLEX l [aaa (d
		ZRANGEBYLEX l + -
		ZRANGEBYLEX l - + LIMIT 2 2
		ZRANGEBYLEX l - + WITHSCORES
		ZRANGEBYLEX l x +
		ZREVRANGEBYLEX l [d -
		ZLEXCOUNT l - +
		ZLEXCOUNT l [b [d
		ZLEXCOUNT l (b (d
		ZLEXCOUNT l [d [b
		ZLEXCOUNT l b d
		ZLEXCOUNT noz - +
		ZRANGE noz 0 -1
		ZRANGE noz 0 -1 WITHSCORES
		ZRANGEBYSCORE noz 0 1
	`
	pops := `
		ZADD z 1 a 2 b 3 c 4 d 5 e
		ZPOPMIN z
		ZPOPMAX z
		ZPOPMIN z 2
		ZPOPMIN z 0
		ZPOPMIN z -1
		ZPOPMIN z x
		ZPOPMIN z 1 2
		ZPOPMAX z 10
		EXISTS z
		ZPOPMIN z
		ZPOPMIN z 3
		ZPOPMAX noz 0
		ZADD z 1 a 2 b 3 c 4 d 5 e 6 f
		ZREM z a x b
		ZREM z nope
		ZREM noz a
		ZREMRANGEBYSCORE z 4 5
		ZREMRANGEBYSCORE z (100 200
		ZREMRANGEBYSCORE z x 1
		ZREMRANGEBYSCORE noz 1 2
		ZRANGE z 0 -1 WITHSCORES
		ZREMRANGEBYRANK z 0 0
		ZREMRANGEBYRANK z 5 1
		ZREMRANGEBYRANK z x 1
		ZREMRANGEBYRANK z 0 -1
		EXISTS z
		ZADD l 0 a 0 b 0 c
		ZREMRANGEBYLEX l [a (c
		ZREMRANGEBYLEX l x y
		ZRANGE l 0 -1
		ZREM l c
		EXISTS l
		BZPOPMIN noz z2 0.01
		ZADD z2 3 x 4 y
		BZPOPMIN noz z2 0
		BZPOPMAX noz z2 0
		BZPOPMAX z2 0.01
		BZPOPMIN z2 x
		BZPOPMIN z2 -1
		MULTI
		BZPOPMIN z2 0
		ZADD z2 1 m
		BZPOPMIN z2 0
		EXEC
		ZADD one 7 only
		ZRANDMEMBER one
		ZRANDMEMBER one 1
		ZRANDMEMBER one -3 WITHSCORES
		ZRANDMEMBER one 5 WITHSCORES
		ZRANDMEMBER one 0
		ZRANDMEMBER noz
		ZRANDMEMBER noz 3
		ZRANDMEMBER noz 3 WITHSCORES
		ZRANDMEMBER one x
		ZRANDMEMBER one 1 FOO
		ZRANDMEMBER one 1 WITHSCORES extra
		ZRANDMEMBER one -9223372036854775808
		ZRANDMEMBER one 9223372036854775807 WITHSCORES
		ZADD two 1 a 2 b
		ZRANDMEMBER two 2 WITHSCORES
		ZRANDMEMBER two 10
	`
	types := `
		SET s x
		ZADD s 1 a
		ZINCRBY s 1 a
		ZREM s a
		ZCARD s
		ZSCORE s a
		ZMSCORE s a
		ZRANK s a
		ZCOUNT s 0 1
		ZLEXCOUNT s - +
		ZRANGE s 0 1
		ZRANGEBYSCORE s 0 1
		ZPOPMIN s
		ZPOPMIN s 0
		BZPOPMIN s 0
		BZPOPMIN noz s 0
		ZREMRANGEBYRANK s 0 1
		ZRANDMEMBER s
		ZRANDMEMBER s 0
		ZADD z 1 a
		TYPE z
		LPUSH z a
		GET z
		SADD z a
		OBJECT ENCODING z
		EXPIRE z 100
		TTL z
		RENAME z z2
		ZRANGE z2 0 -1 WITHSCORES
		MOVE z2 1
		SELECT 1
		ZSCORE z2 a
		SWAPDB 0 1
		SELECT 0
		ZCARD z2
		SCAN 0 TYPE zset
		FLUSHDB
		EXISTS z2
		CONFIG GET zset-max-listpack-entries
		CONFIG GET zset-max-ziplist-value
		CONFIG SET zset-max-ziplist-entries 3
		CONFIG GET zset-max-listpack-entries
		ZADD e 1 a 2 b 3 c
		OBJECT ENCODING e
		ZADD e 4 d
		OBJECT ENCODING e
		ZREM e a b c
		OBJECT ENCODING e
		ZADD f 1 a 2 b 3 c 4 d
		OBJECT ENCODING f
		CONFIG SET zset-max-listpack-entries 0
		ZADD g 1 a
		OBJECT ENCODING g
		CONFIG SET zset-max-listpack-entries 128
		CONFIG SET zset-max-listpack-value 5
		ZADD h 1 abcde
		OBJECT ENCODING h
		ZADD h 1 abcdef
		OBJECT ENCODING h
		ZADD i 1 abcdefg
		OBJECT ENCODING i
		CONFIG SET zset-max-listpack-value 64
		CONFIG SET zset-max-listpack-value x
		CONFIG SET zset-max-listpack-entries -1
	`
	cases := []diffCase{
		{"zadd", zadd},
		{"zadd-resp3", "HELLO 3\n" + zadd},
		{"ranges", ranges},
		{"ranges-resp3", "HELLO 3\n" + ranges},
		{"pops", pops},
		{"pops-resp3", "HELLO 3\n" + pops},
		{"types", types},
		{"zset-grows-to-skiplist", func() string {
			var b strings.Builder
			for i := 0; i < 135; i++ {
				fmt.Fprintf(&b, "ZADD g %d m%d\n", i%7, i)
				if i >= 125 {
					b.WriteString("OBJECT ENCODING g\n")
				}
			}
			b.WriteString("ZREMRANGEBYRANK g 0 100\nOBJECT ENCODING g\n")
			return b.String() + "ZRANGE g 0 -1 WITHSCORES\nZRANK g m134\nZCOUNT g 3 5\nZRANGE g 3 (5 BYSCORE LIMIT 2 5"
		}()},
		{"big-skiplist", func() string {
			// Enough members for several skiplist levels; ranks and ranges read through them.
			var b strings.Builder
			for i := 0; i < 300; i++ {
				fmt.Fprintf(&b, "ZADD b %d m%03d\n", (i*37)%101, i)
			}
			for _, q := range []string{"ZRANK b m150", "ZREVRANK b m007", "ZRANGE b 100 110 WITHSCORES", "ZRANGE b -5 -1 REV",
				"ZCOUNT b 10 (20", "ZRANGE b (50 60 BYSCORE LIMIT 3 4", "ZREMRANGEBYSCORE b 0 10", "ZREMRANGEBYRANK b 10 50",
				"ZCARD b", "ZRANGE b 0 20 WITHSCORES", "ZRANK b m299", "ZPOPMAX b 3", "ZPOPMIN b 3"} {
				b.WriteString(q + "\n")
			}
			return b.String()
		}()},
	}
	runDiffCases(t, cases)
}

// TestDiffRedisZsetBlocking: BZPOPMIN/BZPOPMAX wait, and are served after the command or
// MULTI/EXEC that fed them, in the order they blocked (as BLPOP).
func TestDiffRedisZsetBlocking(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"bzpopmin-zadd", "@1& BZPOPMIN z 0\nZADD z 2 b 1 a\n@1<\nZRANGE z 0 -1 WITHSCORES"},
		{"bzpopmax-zadd-resp3", "@1 HELLO 3\n@1& BZPOPMAX z 0\nZADD z 2 b 1 a\n@1<\nZRANGE z 0 -1"},
		{"bzpopmin-two-clients", "@1& BZPOPMIN z 0\n@2& BZPOPMIN z 0\nZADD z 1 a 2 b 3 c\n@1<\n@2<\nZCARD z"},
		{"bzpopmin-second-key", "@1& BZPOPMIN z1 z2 0\nZADD z2 5 x\n@1<\nEXISTS z2"},
		{"bzpopmin-multi", "@1& BZPOPMIN z 0\nMULTI\nZADD z 1 a\nZREM z a\nZADD z 2 b\nEXEC\n@1<"},
		{"bzpopmin-multi-emptied", "@1& BZPOPMIN z 0\nMULTI\nZADD z 1 a\nZREM z a\nEXEC\nZADD z 3 c\n@1<"},
		{"bzpopmin-wrong-type-then-zset", "@1& BZPOPMIN z 0\nLPUSH z a\nDEL z\nZADD z 4 d\n@1<"},
		{"blpop-not-woken-by-zadd", "@1& BLPOP z 0\nZADD z 1 a\nDEL z\nRPUSH z x\n@1<"},
		{"bzpopmin-rename", "@1& BZPOPMIN z 0\nZADD src 1 a\nRENAME src z\n@1<\nEXISTS z"},
		{"bzpopmin-zincrby", "@1& BZPOPMAX z 0\nZINCRBY z 2 a\n@1<"},
		{"bzpopmin-timeout", "@1 BZPOPMIN z 0.05\n@1 BZPOPMAX z 0.01"},
	})
}

// TestDiffRedisZsetNotifications: the events of every zset command, as Redis sends them.
func TestDiffRedisZsetNotifications(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{EnableDebugCommand: "yes"})
	script := []string{
		"ZADD z 1 a 2 b 3 c", "ZADD z 1 a", "ZADD z XX 5 a", "ZADD z INCR 1 a", "ZINCRBY z 1 b", "ZADD z NX 1 a",
		"ZREM z nope", "ZREM z a", "ZADD z 4 d 5 e 6 f", "ZREMRANGEBYSCORE z 5 5", "ZREMRANGEBYSCORE z 100 200",
		"ZREMRANGEBYRANK z 0 0", "ZREMRANGEBYLEX z - +", "ZADD p 1 a 2 b 3 c", "ZPOPMIN p", "ZPOPMAX p 5",
		"ZPOPMIN p", "ZADD q 1 a", "ZREM q a", "ZADD r 1 a", "EXPIRE r 100", "RENAME r r2", "DEL r2",
		"&BZPOPMIN bz 0", "ZADD bz 1 x", "<", "ZADD w 1 a", "ZREMRANGEBYRANK w 0 -1",
	}
	for _, flags := range []string{"KEA", "Ez", "KEAn"} {
		t.Run(flags, func(t *testing.T) {
			we, wr := notifyTrace(t, realAddr, flags, script, false)
			ge, gr := notifyTrace(t, s.Addr(), flags, script, false)
			for i := range wr {
				if i >= len(gr) {
					t.Fatalf("only %d replies from qbench", len(gr))
				}
				if wr[i] != gr[i] {
					t.Errorf("reply to %q: redis %q, qbench %q", script[i], wr[i], gr[i])
				}
			}
			if w, g := strings.Join(we, ""), strings.Join(ge, ""); w != g {
				t.Errorf("events differ:\n%s", sideBySide(we, ge))
			}
		})
	}
}

// TestDiffRedisZsetReload: DEBUG RELOAD gives zsets the encoding Redis's RDB load gives them by
// the current limits (a small skiplist comes back a listpack, with -0 read as 0).
func TestDiffRedisZsetReload(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"reload", `
			CONFIG SET zset-max-listpack-entries 1
			ZADD a 1 x 2 y
			CONFIG SET zset-max-listpack-entries 0
			ZADD n -0 x
			ZADD n 1 y
			OBJECT ENCODING a
			OBJECT ENCODING n
			ZSCORE n x
			CONFIG SET zset-max-listpack-entries 128
			ZADD b 1 x 2 y
			DEBUG RELOAD
			OBJECT ENCODING a
			OBJECT ENCODING n
			ZSCORE n x
			ZRANGE n 0 -1 WITHSCORES
			CONFIG SET zset-max-listpack-entries 1
			DEBUG RELOAD
			OBJECT ENCODING b
			CONFIG SET zset-max-listpack-entries 128`},
	})
}

// TestDiffRedisRandomZsets: random sorted-set commands over a few shared keys (with a list key
// for wrong types), scores with ties, infinities and fractions, members shared across keys,
// lex ranges over a key whose scores are all 0, some inside MULTI, in RESP2 and (even seeds) RESP3, against redis-server. The listpack limit
// is small so keys cross to skiplists and back through deletions. ZRANDMEMBER is asked only for
// at least as many members as there are (its answer is then determined).
func TestDiffRedisRandomZsets(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
			key := func() string { return pick("z1", "z2", "z3", "l") }
			member := func() string { return pick("a", "b", "c", "d", "e", "f", "g", "h", "aa", "b1", "1", "10") }
			score := func() string { return pick("0", "1", "1", "2", "2.5", "-1", "3", "7", "inf", "-inf", "0.1", "100") }
			bound := func() string { return pick("", "(") + score() }
			// Lex ranges are defined only over members of one score (Redis's walk over mixed
			// scores depends on its skiplist's random levels): they go to lx, all scores 0.
			lexKey := func() string { return pick("lx", "lx", "lx", "nokey") }
			lex := func() string { return pick("-", "+", "[a", "(b", "[c", "(d", "[aa", "[h", "(1") }
			idx := func() string { return pick("0", "1", "-1", "-2", "3", "10", "-10") }
			gens := []func() string{
				func() string {
					return fmt.Sprintf("ZADD %s %s %s %s %s %s", key(), pick("", "NX", "XX", "GT", "LT", "CH", "XX GT", "GT CH", "LT CH"), score(), member(), score(), member())
				},
				func() string {
					return fmt.Sprintf("ZADD %s %s INCR %s %s", key(), pick("", "NX", "XX", "GT", "LT"), score(), member())
				},
				func() string { return fmt.Sprintf("ZADD lx 0 %s 0 %s 0 %s", member(), member(), member()) },
				func() string { return fmt.Sprintf("ZINCRBY %s %s %s", key(), score(), member()) },
				func() string { return fmt.Sprintf("ZREM %s %s %s", key(), member(), member()) },
				func() string { return "ZCARD " + key() },
				func() string { return fmt.Sprintf("ZSCORE %s %s", key(), member()) },
				func() string { return fmt.Sprintf("ZMSCORE %s %s %s", key(), member(), member()) },
				func() string { return fmt.Sprintf("%s %s %s", pick("ZRANK", "ZREVRANK"), key(), member()) },
				func() string { return fmt.Sprintf("ZCOUNT %s %s %s", key(), bound(), bound()) },
				func() string { return fmt.Sprintf("ZLEXCOUNT %s %s %s", lexKey(), lex(), lex()) },
				func() string {
					return fmt.Sprintf("%s %s %s %s %s", pick("ZRANGE", "ZREVRANGE"), key(), idx(), idx(), pick("", "WITHSCORES"))
				},
				func() string {
					return fmt.Sprintf("ZRANGE %s %s %s BYSCORE %s %s %s", key(), bound(), bound(), pick("", "REV"), pick("", "WITHSCORES"), pick("", "LIMIT 1 2", "LIMIT 0 -1"))
				},
				func() string {
					return fmt.Sprintf("%s %s %s %s %s", pick("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), key(), bound(), bound(), pick("", "WITHSCORES", "LIMIT 1 1"))
				},
				func() string {
					return fmt.Sprintf("%s %s %s %s %s", pick("ZRANGEBYLEX", "ZREVRANGEBYLEX"), lexKey(), lex(), lex(), pick("", "LIMIT 0 2", "LIMIT 2 -1"))
				},
				func() string {
					return fmt.Sprintf("%s %s %s", pick("ZPOPMIN", "ZPOPMAX"), key(), pick("", "1", "2", "100"))
				},
				func() string { return fmt.Sprintf("%s %s %s 0.001", pick("BZPOPMIN", "BZPOPMAX"), key(), key()) },
				func() string { return fmt.Sprintf("ZREMRANGEBYSCORE %s %s %s", key(), bound(), bound()) },
				func() string { return fmt.Sprintf("ZREMRANGEBYRANK %s %s %s", key(), idx(), idx()) },
				func() string { return fmt.Sprintf("ZREMRANGEBYLEX %s %s %s", lexKey(), lex(), lex()) },
				func() string { return fmt.Sprintf("ZRANDMEMBER %s 100 %s", key(), pick("", "WITHSCORES")) },
				func() string { return fmt.Sprintf("RPUSH %s x", key()) },
				func() string { return fmt.Sprintf("%s %s %s", pick("RENAME", "RENAMENX"), key(), key()) },
				func() string { return "OBJECT ENCODING " + key() },
				func() string { return "TYPE " + key() },
				func() string { return "DEL " + key() },
			}
			lines := []string{"CONFIG SET zset-max-listpack-entries 4"}
			if seed%2 == 0 {
				lines = append(lines, "HELLO 3")
			}
			lines = append(lines, randomCommands(r, gens, 700)...)
			lines = append(lines, "CONFIG SET zset-max-listpack-entries 128")
			runDiff(t, realAddr, s.Addr(), lines)
		})
	}
}
