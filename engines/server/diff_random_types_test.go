package server

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestDiffRedisRandomTypes: random set, hash, multi-key string, rename/move/swap and OBJECT
// commands over a few shared keys in two databases (so wrong types and moved keys meet), some
// inside MULTI, in RESP2 and (even seeds) RESP3. Set members are integers so sets stay intsets and their order is Redis's;
// random choices (SPOP, SRANDMEMBER) are asked only for more members than a set has.
func TestDiffRedisRandomTypes(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
			key := func() string { return pick("s1", "s2", "h1", "h2", "k1", "k2") }
			member := func() string { return fmt.Sprint(r.Intn(12) - 2) }
			field := func() string { return pick("f1", "f2", "f3", "n") }
			gens := []func() string{
				func() string { return fmt.Sprintf("SADD %s %s %s", key(), member(), member()) },
				func() string { return fmt.Sprintf("SREM %s %s %s", key(), member(), pick("x", member())) },
				func() string { return "SMEMBERS " + key() },
				func() string { return fmt.Sprintf("SISMEMBER %s %s", key(), pick("x", member())) },
				func() string { return "SCARD " + key() },
				func() string { return fmt.Sprintf("SRANDMEMBER %s %s", key(), pick("100", "0", "x")) },
				func() string { return fmt.Sprintf("SPOP %s %s", key(), pick("100", "0", "-1")) },
				func() string {
					return fmt.Sprintf("HSET %s %s %s %s", key(), field(), pick("1", "v", "-4"), pick("", field()+" 2"))
				},
				func() string { return fmt.Sprintf("HMSET %s %s x", key(), field()) },
				func() string { return fmt.Sprintf("HGET %s %s", key(), field()) },
				func() string { return "HGETALL " + key() },
				func() string { return fmt.Sprintf("HDEL %s %s %s", key(), field(), field()) },
				func() string { return fmt.Sprintf("HINCRBY %s %s %s", key(), field(), pick("1", "-7", "x")) },
				func() string { return fmt.Sprintf("MSET %s %s %s 7", key(), pick("1", "v", "2.5"), key()) },
				func() string { return fmt.Sprintf("MGET %s %s %s", key(), key(), key()) },
				func() string { return fmt.Sprintf("GETSET %s %s", key(), pick("3", "w")) },
				func() string { return fmt.Sprintf("INCRBYFLOAT %s %s", key(), pick("1.5", "0.1", "-2", "x", "3e2")) },
				func() string { return fmt.Sprintf("%s %s %s", pick("RENAME", "RENAMENX"), key(), key()) },
				func() string { return fmt.Sprintf("MOVE %s %s", key(), pick("0", "1")) },
				func() string { return "SWAPDB 0 1" },
				func() string { return "SELECT " + pick("0", "1") },
				func() string { return "OBJECT ENCODING " + key() },
				func() string { return "TYPE " + key() },
				func() string { return "DEL " + key() },
				func() string { return "DBSIZE" },
			}
			var lines []string
			if seed%2 == 0 {
				lines = append(lines, "HELLO 3") // sets, maps and nulls in RESP3 shapes
			}
			lines = append(lines, randomCommands(r, gens, 1500)...)
			runDiff(t, realAddr, s.Addr(), lines)
		})
	}
}

// randomCommands draws n commands from gens, about one in 40 of them a MULTI/EXEC of three: the
// random differential tests' one way of turning generators into a script.
func randomCommands(r *rand.Rand, gens []func() string, n int) []string {
	var lines []string
	for i := 0; i < n; i++ {
		if r.Intn(40) == 0 {
			lines = append(lines, "MULTI")
			for j := 0; j < 3; j++ {
				lines = append(lines, strings.Join(strings.Fields(gens[r.Intn(len(gens))]()), " "))
			}
			lines = append(lines, "EXEC")
			continue
		}
		lines = append(lines, strings.Join(strings.Fields(gens[r.Intn(len(gens))]()), " "))
	}
	return lines
}
