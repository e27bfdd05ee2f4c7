package server

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDiffRedisClientReply: CLIENT REPLY OFF|ON|SKIP, sent pipelined so the only replies read
// are the ones the server must send.
func TestDiffRedisClientReply(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"off-on", `RAW "CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\nFOO\r\nCLIENT REPLY ON\r\n"
			GET a`},
		{"skip", `RAW "CLIENT REPLY SKIP\r\nSET b 2\r\nGET b\r\n"
			RAW "CLIENT REPLY SKIP\r\nCLIENT REPLY SKIP\r\nINCR b\r\nGET b\r\n"
			CLIENT REPLY FOO
			CLIENT REPLY`},
		{"off-skip-on", `RAW "CLIENT REPLY OFF\r\nCLIENT REPLY SKIP\r\nSET c 3\r\nCLIENT REPLY ON\r\n"
			GET c`},
		{"resp3", `HELLO 3
			RAW "CLIENT REPLY SKIP\r\nHGETALL h\r\nPING\r\n"`},
		// Pub/sub confirmations are pushes: Redis 7.0 sends them even with replies off.
		{"off-subscribe", `RAW "CLIENT REPLY OFF\r\nSUBSCRIBE ch1 ch2\r\nUNSUBSCRIBE ch1\r\nPSUBSCRIBE p*\r\nPUNSUBSCRIBE\r\nUNSUBSCRIBE\r\nCLIENT REPLY ON\r\n"
			PING`},
		{"skip-subscribe", `RAW "CLIENT REPLY SKIP\r\nSUBSCRIBE ch\r\nUNSUBSCRIBE\r\nCLIENT REPLY SKIP\r\nUNSUBSCRIBE\r\n"
			PING`},
		{"off-multi", `RAW "CLIENT REPLY OFF\r\nMULTI\r\nSET m 1\r\nEXEC\r\nCLIENT REPLY ON\r\n"
			GET m`},
	})
}

// TestDiffRedisClientUnblock: CLIENT UNBLOCK with TIMEOUT, ERROR and on clients that are not
// blocked, against both servers (the blocked client's id differs, so it is read first).
func TestDiffRedisClientUnblock(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{EnableDebugCommand: "yes"}) // as the redis-server it is compared with
	cases := []struct{ block, how string }{
		{"BLPOP l 0", ""},
		{"BLPOP l 0", " TIMEOUT"},
		{"BLPOP l 0", " ERROR"},
		{"XREAD BLOCK 0 STREAMS s $", " ERROR"},
		{"XREADGROUP GROUP g c BLOCK 0 STREAMS s >", " TIMEOUT"},
		{"BLMOVE l m LEFT RIGHT 0", " ERROR"},
	}
	for _, tc := range cases {
		t.Run(tc.block+tc.how, func(t *testing.T) {
			var got []string
			for _, addr := range []string{realAddr, s.Addr()} {
				ctl, blk := dialRaw(t, addr), dialRaw(t, addr)
				var out []string
				do := func(c *rawConn, cmd string) string {
					c.send(splitWords(cmd))
					b, err := c.readReply(5 * time.Second)
					if err != nil {
						return "<" + err.Error() + ">"
					}
					return string(b)
				}
				do(ctl, "FLUSHALL")
				do(ctl, "XGROUP CREATE s g $ MKSTREAM")
				id := strings.TrimSpace(strings.TrimPrefix(do(blk, "CLIENT ID"), ":"))
				out = append(out, do(ctl, "CLIENT UNBLOCK "+id+tc.how)) // not blocked: 0
				blk.send(splitWords(tc.block))
				deadline := time.Now().Add(5 * time.Second)
				for !strings.Contains(do(ctl, "INFO clients"), "blocked_clients:1") && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				out = append(out, do(ctl, "CLIENT UNBLOCK "+id+tc.how))
				b, err := blk.readReply(5 * time.Second)
				out = append(out, fmt.Sprintf("%q %v", b, err))
				out = append(out, do(ctl, "CLIENT UNBLOCK "+id+tc.how), do(blk, "PING"), do(ctl, "LPUSH l x"), do(ctl, "LLEN m"))
				out = append(out, do(ctl, "CLIENT UNBLOCK x"), do(ctl, "CLIENT UNBLOCK 1 FOO"), do(ctl, "CLIENT UNBLOCK 99999"))
				got = append(got, strings.Join(out, " | "))
			}
			if got[0] != got[1] {
				t.Errorf("\n  redis:  %q\n  qbench: %q", got[0], got[1])
			}
		})
	}
}

func splitWords(s string) [][]byte {
	var out [][]byte
	for _, w := range strings.Fields(s) {
		out = append(out, []byte(w))
	}
	return out
}

// TestDiffRedisDebug: the DEBUG subcommands tools use (Redis runs with enable-debug-command).
func TestDiffRedisDebug(t *testing.T) {
	proto := ""
	for _, typ := range []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push", "verbatim", "true", "false", "foo"} {
		proto += "DEBUG PROTOCOL " + typ + "\n"
	}
	reload := `
		RPUSH l a b c
		SADD s 1 2 3
		SADD t a
		HSET h f1 v1 f2 v2
		SET n 12
		SET x v EX 1000
		XADD st 1-1 a 1
		XGROUP CREATE st g 0
		XREADGROUP GROUP g c STREAMS st >
		DEBUG RELOAD
		LRANGE l 0 -1
		SMEMBERS s
		OBJECT ENCODING s
		SMEMBERS t
		HGETALL h
		OBJECT ENCODING h
		OBJECT ENCODING n
		TTL x
		XPENDING st g
		DEBUG DIGEST-VALUE nokey
		FLUSHALL
		DEBUG DIGEST`
	runDiffCases(t, []diffCase{
		{"protocol", proto},
		{"protocol-resp3", "HELLO 3\n" + proto},
		{"misc", `
			DEBUG ERROR "FOO bar"
			DEBUG ERROR oops
			DEBUG LOG hello
			DEBUG CHANGE-REPL-ID
			DEBUG QUICKLIST-PACKED-THRESHOLD 100
			DEBUG OBJECT nokey
			DEBUG FOOBAR
			DEBUG SET-ACTIVE-EXPIRE 0
			SET k v PX 1
			DEBUG SLEEP 0.2
			DBSIZE
			DEBUG SET-ACTIVE-EXPIRE 1
			DEBUG SLEEP 0.3
			DBSIZE`},
		{"reload", reload},
		{"reload-reencodes", `
			CONFIG SET hash-max-listpack-entries 2
			CONFIG SET set-max-intset-entries 2
			HSET h a 1 b 2 c 3
			SADD s 1 2 3
			SADD m 1 2
			OBJECT ENCODING h
			OBJECT ENCODING s
			CONFIG SET hash-max-listpack-entries 512
			CONFIG SET set-max-intset-entries 512
			DEBUG RELOAD
			OBJECT ENCODING h
			OBJECT ENCODING s
			CONFIG SET set-max-intset-entries 1
			DEBUG RELOAD
			OBJECT ENCODING m
			CONFIG SET set-max-intset-entries 512`},
	})
}
