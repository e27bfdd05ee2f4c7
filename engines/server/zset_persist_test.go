package server

import (
	"fmt"
	"strings"
	"testing"
)

var longMember = strings.Repeat("n", 65)

// zsetWorkload writes zsets in both encodings through every writing zset command, with a
// BZPOPMIN served by a later ZADD (logged as it happened), MULTI, an expiry and RENAME.
func zsetWorkload(t *testing.T, s *Server) {
	a := mustPDial(t, s.Addr())
	b := mustPDial(t, s.Addr())
	a.mustDo(t, "ZADD", "small", "1", "a", "2", "b", "3", "c", "inf", "top", "-inf", "bottom", "-0", "zero")
	a.mustDo(t, "ZINCRBY", "small", "0.1", "a")
	a.mustDo(t, "ZADD", "small", "GT", "CH", "5", "b", "0", "c")
	for i := 0; i < 200; i++ {
		a.mustDo(t, "ZADD", "big", fmt.Sprint(i%13), fmt.Sprintf("m%d", i))
	}
	a.mustDo(t, "ZREM", "big", "m1", "m2")
	a.mustDo(t, "ZREMRANGEBYSCORE", "big", "(11", "12")
	a.mustDo(t, "ZREMRANGEBYRANK", "big", "0", "9")
	a.mustDo(t, "ZPOPMIN", "big", "3")
	a.mustDo(t, "ZPOPMAX", "big")
	a.mustDo(t, "ZADD", "neg", "-0", longMember) // a skiplist at once (member > 64 bytes): keeps -0
	a.mustDo(t, "ZADD", "ttl", "1", "x")
	a.mustDo(t, "EXPIRE", "ttl", "1000")
	a.mustDo(t, "RENAME", "ttl", "ttl2")
	a.mustDo(t, "MULTI")
	a.mustDo(t, "ZADD", "tx", "1", "a", "2", "b")
	a.mustDo(t, "ZPOPMIN", "tx")
	a.mustDo(t, "EXEC")
	b.send("BZPOPMIN", "none", "q", "0")
	b.bw.Flush()
	waitPBlocked(t, s, 1)
	a.mustDo(t, "ZADD", "q", "2", "two", "1", "one")
	if v, err := b.read(); err != nil || v == nil {
		t.Fatalf("blocked BZPOPMIN: %v %v", v, err)
	}
	a.mustDo(t, "BZPOPMAX", "q", "0") // served at once: logged as ZPOPMAX
}

// TestZsetSurvivesRestart: zsets come back the same (members, scores, -0 and inf, encoding,
// expiry) from the AOF, a snapshot and a rewritten AOF, and DUMP/RESTORE copies them.
func TestZsetSurvivesRestart(t *testing.T) {
	// small big neg ttl2 tx; q emptied by the pops
	restartEachWay(t, zsetWorkload, func(n int) bool { return n == 5 }, func(t *testing.T, c2 *pconn) {
		for key, enc := range map[string]string{"small": "listpack", "big": "skiplist", "neg": "skiplist"} {
			if v := c2.mustDo(t, "OBJECT", "ENCODING", key); v != enc {
				t.Errorf("OBJECT ENCODING %s = %v after restart, want %s", key, v, enc)
			}
		}
		if v := c2.mustDo(t, "ZSCORE", "neg", longMember); v != "-0" {
			t.Errorf("ZSCORE neg n = %v after restart, want -0", v)
		}
		for _, key := range []string{"small", "big", "neg"} { // and DUMP/RESTORE them
			c2.mustDo(t, "RESTORE", key+"-copy", "0", fmt.Sprint(c2.mustDo(t, "DUMP", key)))
			want := fmt.Sprint(c2.mustDo(t, "ZRANGE", key, "0", "-1", "WITHSCORES"))
			if got := fmt.Sprint(c2.mustDo(t, "ZRANGE", key+"-copy", "0", "-1", "WITHSCORES")); got != want {
				t.Errorf("RESTORE of DUMP %s: %s, want %s", key, got, want)
			}
		}
	})
}
