package server

import "testing"

// TestDiffRedisZmpop: ZMPOP and BZMPOP as Redis 7.0.15's zmpopGenericCommand: argument errors
// in its order, the nested [key, [[member, score]...]] reply in RESP2 and RESP3, the null
// reply, wrong types, events, and BZMPOP's blocking, waking and timeout.
func TestDiffRedisZmpop(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"zmpop", `
			ZADD z1 1 a 2 b 3 c 4.5 d
			ZADD z2 -1 x
			ZMPOP 1 z1 MIN
			ZMPOP 1 z1 max COUNT 2
			ZMPOP 2 nokey z2 MIN COUNT 10
			EXISTS z2
			ZMPOP 2 nokey z2 MAX
			ZMPOP 1 z1 MIN COUNT 100
			EXISTS z1
			ZADD z3 1 a inf b -inf c
			ZMPOP 1 z3 MAX COUNT 3`},
		{"zmpop-resp3", `
			HELLO 3
			ZADD z 1 a 2.5 b
			ZMPOP 1 z MAX COUNT 5
			ZMPOP 1 z MIN`},
		{"zmpop-errors", `
			ZADD z 1 a
			SET s x
			ZMPOP 0 z MIN
			ZMPOP -1 z MIN
			ZMPOP x z MIN
			ZMPOP 2 z MIN
			ZMPOP 1 z LEFT
			ZMPOP 1 z MIN COUNT 0
			ZMPOP 1 z MIN COUNT -1
			ZMPOP 1 z MIN COUNT x
			ZMPOP 1 z MIN COUNT 1 COUNT 1
			ZMPOP 1 z MIN COUNT
			ZMPOP 1 z MIN foo
			ZMPOP 1 s MIN
			ZMPOP 2 nokey s MIN
			ZMPOP 2 z s MIN
			ZMPOP 1 z
			ZMPOP 1`},
		{"bzmpop", `
			ZADD z 1 a 2 b
			BZMPOP 0 1 z MAX COUNT 1
			@1& BZMPOP 0 2 q1 q2 MIN COUNT 3
			ZADD q2 3 c 1 a 2 b 4 d
			@1<
			ZRANGE q2 0 -1 WITHSCORES
			BZMPOP 0.01 1 nokey MIN
			BZMPOP -1 1 z MIN
			BZMPOP x 1 z MIN
			BZMPOP 0 0 z MIN
			BZMPOP 0 1 z MIDDLE
			SET s x
			BZMPOP 0 1 s MIN
			@2 HELLO 3
			@2& BZMPOP 0 1 r MAX
			MULTI
			ZADD r 1 a 2 b
			ZREM r b
			EXEC
			@2<
			MULTI
			BZMPOP 0 1 nokey MIN
			EXEC`},
	})
}
