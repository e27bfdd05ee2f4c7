package server

import (
	"strings"
	"testing"
)

// runDiffCases runs named scripts (one command a line) against redis-server and our server.
func runDiffCases(t *testing.T, cases []diffCase) {
	t.Helper()
	realAddr := startRealRedis(t)
	s := startServer(t, Config{EnableDebugCommand: "yes"}) // as the redis-server it is compared with
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			for _, l := range strings.Split(tc.script, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					lines = append(lines, l)
				}
			}
			runDiff(t, realAddr, s.Addr(), lines)
		})
	}
}

// TestDiffRedisBlockingMoment: blocked clients are served after the whole command or
// MULTI/EXEC, against the state it left (Redis's handleClientsBlockedOnKeys after call()).
func TestDiffRedisBlockingMoment(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"xadd-del-in-multi", `
			@1& XREAD BLOCK 0 STREAMS s $
			MULTI
			XADD s 1-1 a 1
			DEL s
			EXEC
			XADD s 2-1 b 2
			@1<`},
		{"two-xadds-in-multi", `
			XADD s 1-1 a 0
			@1& XREAD BLOCK 0 STREAMS s $
			MULTI
			XADD s 2-1 a 1
			XADD s 3-1 b 2
			EXEC
			@1<`},
		{"xadd-xdel-in-multi", `
			XADD s 1-1 a 0
			@1& XREAD BLOCK 0 STREAMS s $
			MULTI
			XADD s 2-1 a 1
			XDEL s 2-1
			EXEC
			@1<`},
		{"xreadgroup-two-xadds", `
			XGROUP CREATE s g $ MKSTREAM
			@1& XREADGROUP GROUP g c BLOCK 0 STREAMS s >
			MULTI
			XADD s 2-1 a 1
			XADD s 3-1 b 2
			EXEC
			@1<
			XPENDING s g`},
		{"lpush-del-blpop", `
			@1& BLPOP l 0
			MULTI
			LPUSH l a
			DEL l
			EXEC
			LPUSH l b
			@1<`},
		{"lpush-del-blmpop", `
			@1& BLMPOP 0 1 l LEFT COUNT 2
			MULTI
			LPUSH l a
			DEL l
			EXEC
			RPUSH l b c d
			@1<
			LRANGE l 0 -1`},
		{"multi-pushes-blpop", `
			@1& BLPOP l 0
			MULTI
			LPUSH l a
			LPUSH l b
			LPUSH l c
			EXEC
			@1<
			LRANGE l 0 -1`},
		{"brpoplpush-blocked-watch", `
			SET somekey somevalue
			WATCH dstlist
			@1& BRPOPLPUSH srclist dstlist 0
			MULTI
			LPUSH dstlist somevalue
			EXEC
			LPUSH srclist x
			@1<
			LRANGE dstlist 0 -1`},
		{"brpoplpush-blocked-before-watch", `
			@1& BRPOPLPUSH srclist dstlist 0
			WATCH dstlist
			MULTI
			LPUSH dstlist somevalue
			EXEC
			LPUSH srclist x
			@1<`},
		{"brpoplpush-push-affects-watch", `
			@1& BRPOPLPUSH srclist dstlist 0
			@2 WATCH dstlist
			@2 MULTI
			@2 GET somekey
			LPUSH srclist element
			@2 EXEC
			@1<`},
		{"timeouts-1ms", `
			BLPOP l 0.001
			BRPOP l 0.001
			BLMPOP 0.001 1 l LEFT
			BLMOVE l m LEFT RIGHT 0.001
			BRPOPLPUSH l m 0.001
			XREAD BLOCK 1 STREAMS s $
			BLPOP l 0.0001
			DEBUG SLEEP 0
			LPUSH l after`},
	})
}

// TestDiffRedisBlockingWake: blocked clients are woken when their key is deleted, flushed,
// changed type, renamed, moved, swapped, or its group destroyed.
func TestDiffRedisBlockingWake(t *testing.T) {
	group := "XGROUP CREATE s g $ MKSTREAM\n@1& XREADGROUP GROUP g c BLOCK 0 STREAMS s >\n"
	xread := "XADD s 1-1 a 1\n@1& XREAD BLOCK 0 STREAMS s $\n"
	runDiffCases(t, []diffCase{
		{"xreadgroup-del", group + "DEL s\n@1<"},
		{"xreadgroup-unlink", group + "UNLINK s\n@1<"},
		{"xreadgroup-set", group + "SET s x\n@1<"},
		{"xreadgroup-flushall", group + "FLUSHALL\n@1<"},
		{"xreadgroup-flushdb", group + "FLUSHDB\n@1<"},
		{"xreadgroup-flushdb-other", group + "SELECT 1\nFLUSHDB\nSELECT 0\nXADD s 5-1 a 1\n@1<"},
		{"xreadgroup-expire", group + "PEXPIRE s 1\nDEBUG SLEEP 0.05\nEXISTS s\n@1<"},
		{"xreadgroup-del-recreate-in-multi", group + "MULTI\nDEL s\nXADD s 5-1 a 1\nEXEC\n@1<"},
		{"xreadgroup-del-list-in-multi", group + "MULTI\nDEL s\nLPUSH s a\nEXEC\n@1<"},
		{"xreadgroup-group-destroy", group + "XGROUP DESTROY s g\n@1<"},
		{"xreadgroup-rename-from", group + "RENAME s s2\n@1<"},
		{"xreadgroup-rename-with-group", group + "XGROUP CREATE s2 g $ MKSTREAM\nXADD s2 100-1 f1 v1\nRENAME s2 s\n@1<"},
		{"xreadgroup-rename-without-group", group + "XADD s2 100-1 f1 v1\nRENAME s2 s\n@1<"},
		{"xreadgroup-swapdb", group + "SWAPDB 0 1\n@1<"},
		{"xreadgroup-move", group + "MOVE s 1\n@1<"},
		{"xread-del", xread + "DEL s\nXADD s 7-1 b 2\n@1<"},
		{"xread-set", xread + "SET s x\nDEL s\nXADD s 8-1 b 2\n@1<"},
		{"xread-flushall", xread + "FLUSHALL\nXADD s 9-1 c 3\n@1<"},
		{"xread-rename-in", "@1& XREAD BLOCK 0 STREAMS s 0\nXADD s2 5-1 a 1\nRENAME s2 s\n@1<"},
		{"blpop-rename", "@1& BLPOP l 0\nRPUSH src a b\nRENAME src l\n@1<\nLRANGE l 0 -1"},
		{"blpop-renamenx", "@1& BLPOP l 0\nRPUSH src a b\nRENAMENX src l\n@1<\nLRANGE l 0 -1"},
		{"blpop-move", "@1& BLPOP l 0\nSELECT 1\nRPUSH l a b\nMOVE l 0\nSELECT 0\n@1<\nLRANGE l 0 -1"},
		{"blpop-swapdb", "@1& BLPOP l 0\nSELECT 1\nRPUSH l a b\nSWAPDB 0 1\nSELECT 0\n@1<\nLRANGE l 0 -1"},
		{"blpop-lmove-creates", "@1& BLPOP l 0\nRPUSH src a\nLMOVE src l LEFT LEFT\n@1<\nEXISTS l src"},
		{"blpop-string-rename", "@1& BLPOP l 0\nSET src a\nRENAME src l\nDEL l\nRPUSH l x\n@1<"},
	})
}
