package server

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestDiffRedisRandom sends random, mostly valid list and stream commands (fixed seeds) to both
// servers. The argument domains are small so that commands interact: the same few keys, IDs,
// groups and consumers.
func TestDiffRedisRandom(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	for seed := int64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			script := randomScript(rand.New(rand.NewSource(seed)), 2000)
			if seed%2 == 0 {
				script = append([]string{"HELLO 3"}, script...) // every shape in RESP3 too
			}
			runDiff(t, realAddr, s.Addr(), script)
		})
	}
}

func randomScript(r *rand.Rand, n int) []string {
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	lkey := func() string { return pick("l1", "l2", "l3", "s1") }
	skey := func() string { return pick("s1", "s2", "l1") }
	val := func() string { return pick("a", "b", "c", "1", "22", `""`, "hello") }
	idx := func() string { return fmt.Sprint(r.Intn(9) - 4) }
	id := func() string {
		switch r.Intn(6) {
		case 0:
			return pick("-", "+", "0", "0-0")
		case 1:
			return fmt.Sprintf("(%d-%d", r.Intn(30), r.Intn(3))
		}
		return fmt.Sprintf("%d-%d", r.Intn(30), r.Intn(3))
	}
	group := func() string { return pick("g1", "g2") }
	cons := func() string { return pick("c1", "c2", "c3") }
	gens := []func() string{
		func() string { return fmt.Sprintf("%s %s %s %s", pick("LPUSH", "RPUSH"), lkey(), val(), val()) },
		func() string { return fmt.Sprintf("%s %s", pick("LPUSHX", "RPUSHX"), lkey()+" "+val()) },
		func() string { return fmt.Sprintf("%s %s", pick("LPOP", "RPOP"), lkey()) },
		func() string { return fmt.Sprintf("%s %s %d", pick("LPOP", "RPOP"), lkey(), r.Intn(4)) },
		func() string { return fmt.Sprintf("LRANGE %s %s %s", lkey(), idx(), idx()) },
		func() string { return fmt.Sprintf("LINDEX %s %s", lkey(), idx()) },
		func() string { return fmt.Sprintf("LSET %s %s %s", lkey(), idx(), val()) },
		func() string {
			return fmt.Sprintf("LINSERT %s %s %s %s", lkey(), pick("BEFORE", "AFTER"), val(), val())
		},
		func() string { return fmt.Sprintf("LREM %s %s %s", lkey(), idx(), val()) },
		func() string { return fmt.Sprintf("LTRIM %s %s %s", lkey(), idx(), idx()) },
		func() string {
			return fmt.Sprintf("LPOS %s %s RANK %s COUNT %d", lkey(), val(), pick("1", "-1", "2"), r.Intn(3))
		},
		func() string {
			return fmt.Sprintf("LMOVE %s %s %s %s", lkey(), lkey(), pick("LEFT", "RIGHT"), pick("LEFT", "RIGHT"))
		},
		func() string {
			return fmt.Sprintf("LMPOP 2 %s %s %s COUNT %d", lkey(), lkey(), pick("LEFT", "RIGHT"), 1+r.Intn(3))
		},
		func() string { return fmt.Sprintf("LLEN %s", lkey()) },
		func() string {
			trim := pick("", "", "MAXLEN 5", "MAXLEN ~ 3", "MINID 10", "MINID ~ 5", "NOMKSTREAM")
			return fmt.Sprintf("XADD %s %s %d-%s f %s", skey(), trim, r.Intn(40), pick("*", "0", "1", "2"), val())
		},
		// Auto IDs only on s1: the harness names auto IDs by first appearance, which cannot
		// tell apart equal IDs generated in the same millisecond on two streams.
		func() string { return fmt.Sprintf("XADD s1 * a %s b %s", val(), val()) },
		func() string { return fmt.Sprintf("XDEL %s %s %s", skey(), id(), id()) },
		func() string {
			return fmt.Sprintf("XTRIM %s %s", skey(), pick("MAXLEN 4", "MAXLEN ~ 2", "MINID 12", "MAXLEN = 0"))
		},
		func() string {
			return fmt.Sprintf("%s %s %s %s COUNT %d", pick("XRANGE", "XREVRANGE"), skey(), id(), id(), r.Intn(4))
		},
		func() string {
			return fmt.Sprintf("XREAD COUNT %d STREAMS %s %s %s %s", r.Intn(3), skey(), skey(), id(), id())
		},
		func() string {
			return fmt.Sprintf("XGROUP CREATE %s %s %s %s", skey(), group(), pick("$", "0", "5-0"), pick("", "MKSTREAM"))
		},
		func() string { return fmt.Sprintf("XGROUP SETID %s %s %s", skey(), group(), pick("$", "0", "7-1")) },
		func() string {
			return fmt.Sprintf("XGROUP %s %s %s %s", pick("CREATECONSUMER", "DELCONSUMER"), skey(), group(), cons())
		},
		func() string { return fmt.Sprintf("XGROUP DESTROY %s %s", skey(), group()) },
		func() string {
			return fmt.Sprintf("XREADGROUP GROUP %s %s COUNT %d %s STREAMS %s %s", group(), cons(), r.Intn(4), pick("", "NOACK"), skey(), pick(">", ">", "0", id()))
		},
		func() string { return fmt.Sprintf("XACK %s %s %s %s", skey(), group(), id(), id()) },
		func() string { return fmt.Sprintf("XPENDING %s %s", skey(), group()) },
		func() string {
			return fmt.Sprintf("~XPENDING %s %s - + %d %s", skey(), group(), r.Intn(5), pick("", cons()))
		},
		func() string {
			return fmt.Sprintf("XCLAIM %s %s %s 0 %s %s %s", skey(), group(), cons(), id(), id(), pick("JUSTID", "RETRYCOUNT 3", "FORCE JUSTID", ""))
		},
		func() string {
			return fmt.Sprintf("XAUTOCLAIM %s %s %s 0 %s COUNT %d %s", skey(), group(), cons(), id(), 1+r.Intn(3), pick("", "JUSTID"))
		},
		func() string { return fmt.Sprintf("XINFO GROUPS %s", skey()) },
		func() string { return fmt.Sprintf("XINFO STREAM %s", skey()) },
		func() string { return fmt.Sprintf("~XINFO CONSUMERS %s %s", skey(), group()) },
		func() string { return fmt.Sprintf("XLEN %s", skey()) },
		func() string { return fmt.Sprintf("%s %s", pick("TYPE", "EXISTS"), pick(lkey(), skey())) },
		// Never DEL s1: a recreated stream restarts auto IDs at the current millisecond and
		// could repeat an earlier ID string, which the harness's ID naming cannot tell apart.
		func() string { return fmt.Sprintf("DEL %s", pick("l1", "l2", "l3", "s2")) },
		// Blocking commands with tiny timeouts: served at once or timed out, never waiting on
		// another client.
		func() string { return fmt.Sprintf("%s %s %s 0.01", pick("BLPOP", "BRPOP"), lkey(), lkey()) },
		func() string {
			return fmt.Sprintf("BLMOVE %s %s %s %s 0.01", lkey(), lkey(), pick("LEFT", "RIGHT"), pick("LEFT", "RIGHT"))
		},
		func() string {
			return fmt.Sprintf("BLMPOP 0.01 2 %s %s %s COUNT 2", lkey(), lkey(), pick("LEFT", "RIGHT"))
		},
		func() string { return fmt.Sprintf("XREAD COUNT 2 BLOCK 1 STREAMS %s %s", skey(), pick("$", "0", id())) },
		func() string {
			return fmt.Sprintf("XREADGROUP GROUP %s %s COUNT 2 BLOCK 1 STREAMS %s %s", group(), cons(), skey(), pick(">", "0"))
		},
		func() string {
			return fmt.Sprintf("MULTI\n%s %s %s\n%s %s\nEXEC", pick("LPUSH", "RPUSH"), lkey(), val(), pick("LPOP", "RPOP", "LLEN"), lkey())
		},
		func() string { return fmt.Sprintf("MULTI\nXADD %s 30-* f %s\nXLEN %s\nEXEC", skey(), val(), skey()) },
	}
	lines := make([]string, 0, n)
	for len(lines) < n {
		l := gens[r.Intn(len(gens))]()
		if strings.HasPrefix(l, "DEL") && r.Intn(4) != 0 {
			continue // deletes are rarer, so structures grow
		}
		if (strings.HasPrefix(l, "B") || strings.Contains(l, " BLOCK ")) && r.Intn(10) != 0 {
			continue // a blocking command that times out costs milliseconds on each server
		}
		for _, part := range strings.Split(l, "\n") {
			lines = append(lines, strings.Join(strings.Fields(part), " "))
		}
	}
	return lines
}

// TestDiffRedisRandomPubSub: random SUBSCRIBE/PSUBSCRIBE/UNSUBSCRIBE/PUNSUBSCRIBE by two
// subscriber clients (one RESP2, one RESP3) and PUBLISH by a third; every delivered message is
// read and compared. Each subscriber holds at most one pattern, because the order in which
// several matching patterns deliver is a hash-table artefact.
func TestDiffRedisRandomPubSub(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			channels := []string{"news", "nets", "sport", "x"}
			patterns := []string{"n*", "ne?s", "*", "s[a-p]ort"}
			type sub struct {
				chans   map[string]bool
				pattern string
			}
			subs := map[int]*sub{1: {chans: map[string]bool{}}, 2: {chans: map[string]bool{}}}
			lines := []string{"@2 HELLO 3"}
			for i := 0; i < 300; i++ {
				c := 1 + r.Intn(2)
				sb := subs[c]
				switch r.Intn(6) {
				case 0, 1:
					ch := channels[r.Intn(len(channels))]
					sb.chans[ch] = true
					lines = append(lines, fmt.Sprintf("@%d SUBSCRIBE %s", c, ch))
				case 2:
					ch := channels[r.Intn(len(channels))]
					delete(sb.chans, ch)
					lines = append(lines, fmt.Sprintf("@%d UNSUBSCRIBE %s", c, ch))
				case 3:
					if sb.pattern == "" {
						sb.pattern = patterns[r.Intn(len(patterns))]
						lines = append(lines, fmt.Sprintf("@%d PSUBSCRIBE %s", c, sb.pattern))
					} else {
						lines = append(lines, fmt.Sprintf("@%d PUNSUBSCRIBE", c))
						sb.pattern = ""
					}
				default:
					ch := channels[r.Intn(len(channels))]
					lines = append(lines, fmt.Sprintf("PUBLISH %s m%d", ch, i))
					for _, n := range []int{1, 2} {
						if subs[n].chans[ch] {
							lines = append(lines, fmt.Sprintf("@%d<", n))
						}
						if p := subs[n].pattern; p != "" && stringMatch(p, ch, false) {
							lines = append(lines, fmt.Sprintf("@%d<", n))
						}
					}
				}
				if r.Intn(20) == 0 {
					lines = append(lines, fmt.Sprintf("@%d PING", c), "PUBSUB NUMSUB news nets sport x", "PUBSUB NUMPAT")
				}
			}
			runDiff(t, realAddr, s.Addr(), lines)
		})
	}
}

// TestDiffRedisRandomGeneric: random string and keyspace commands over a few keys and two DBs.
func TestDiffRedisRandomGeneric(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
			key := func() string { return pick("k1", "k2", "n", "l") }
			expiries := 0
			gens := []func() string{
				func() string {
					return fmt.Sprintf("SET %s %s %s", key(), pick("v", "1", "-5", "x y"), pick("", "NX", "XX", "GET", "EX 100", "PX 150000", "KEEPTTL", "NX GET", "EX 0", "EX x"))
				},
				func() string { return "GET " + key() },
				func() string { return pick("INCR ", "DECR ") + key() },
				func() string { return fmt.Sprintf("INCRBY %s %s", key(), pick("5", "-3", "x", "9223372036854775807")) },
				func() string { return fmt.Sprintf("%s %s %s", pick("DEL", "UNLINK", "EXISTS"), key(), key()) },
				func() string { return "TYPE " + key() },
				// Times stay far from expiring during the test (a slow run must not see a key
				// expire on one server only), and every duration differs from the others by
				// seconds, so GT/LT never compare two deadlines that differ only by elapsed time.
				// Each duration is used once (the same duration set twice would give deadlines
				// that differ only by the elapsed milliseconds, which GT/LT then compare).
				func() string {
					expiries++
					d := fmt.Sprint(300 + expiries*10)
					if expiries%2 == 0 {
						d = fmt.Sprint(200000 - expiries*10)
					}
					return fmt.Sprintf("EXPIRE %s %s %s", key(), pick(d, d, "-1", "x"), pick("", "NX", "XX", "GT", "LT"))
				},
				func() string {
					expiries++
					d := fmt.Sprint(123456 + expiries*10000)
					if expiries%2 == 0 {
						d = fmt.Sprint(250000000 - expiries*10000)
					}
					return fmt.Sprintf("PEXPIRE %s %s %s", key(), pick(d, d, "-1", "x"), pick("", "NX", "XX", "GT", "LT"))
				},
				func() string { return "PERSIST " + key() },
				func() string { return "~" + pick("TTL ", "PTTL ") + key() },
				func() string { return "SELECT " + pick("0", "1") },
				func() string { return "DBSIZE" },
				func() string { return "KEYS " + key() },
				func() string { return "RPUSH l a" },
				func() string { return pick("FLUSHDB", "ECHO hi", "PING") },
			}
			var lines []string
			for i := 0; i < 1000; i++ {
				l := gens[r.Intn(len(gens))]()
				if strings.HasPrefix(l, "FLUSHDB") && r.Intn(10) != 0 {
					continue
				}
				lines = append(lines, strings.Join(strings.Fields(l), " "))
			}
			runDiff(t, realAddr, s.Addr(), lines)
		})
	}
}
