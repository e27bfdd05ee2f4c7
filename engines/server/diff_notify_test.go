package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"qbench/engines/server/resp"
)

// notifyTrace runs script on addr with notify-keyspace-events set to flags and returns what a
// subscriber to every keyspace channel received (up to a marker published at the end), and
// the replies to the script.
func notifyTrace(t *testing.T, addr, flags string, script []string, proto3 bool) (events, replies []string) {
	t.Helper()
	c, sub := dialRaw(t, addr), dialRaw(t, addr)
	do := func(rc *rawConn, args ...string) string {
		var bs [][]byte
		for _, a := range args {
			bs = append(bs, []byte(a))
		}
		rc.send(bs)
		b, err := rc.readReply(5 * time.Second)
		if err != nil {
			t.Fatalf("%s: %v: %v", addr, args, err)
		}
		return string(b)
	}
	do(c, "FLUSHALL")
	do(c, "CONFIG", "SET", "notify-keyspace-events", flags)
	if proto3 {
		do(sub, "HELLO", "3")
	}
	do(sub, "PSUBSCRIBE", "__key*@*__:*")
	do(sub, "SUBSCRIBE", "qbench-end")
	blk := dialRaw(t, addr) // "&CMD" blocks on it; "<" reads its reply
	blocked := func() bool { return strings.Contains(do(c, "INFO", "clients"), "blocked_clients:1\r") }
	for _, line := range script {
		if line == "<" {
			b, err := blk.readReply(5 * time.Second)
			replies = append(replies, fmt.Sprintf("%q %v", b, err))
			continue
		}
		onBlk := strings.HasPrefix(line, "&")
		line = strings.TrimPrefix(line, "&")
		args, ok := resp.SplitArgs([]byte(line))
		if !ok {
			t.Fatalf("cannot split %q", line)
		}
		var ss []string
		for _, a := range args {
			ss = append(ss, string(a))
		}
		if onBlk {
			blk.send(args)
			for deadline := time.Now().Add(5 * time.Second); !blocked(); {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %q never blocked", addr, line)
				}
				time.Sleep(time.Millisecond)
			}
			replies = append(replies, "")
			continue
		}
		replies = append(replies, do(c, ss...))
	}
	do(c, "CONFIG", "SET", "notify-keyspace-events", "")
	do(c, "PUBLISH", "qbench-end", "x")
	for {
		b, err := sub.readReply(5 * time.Second)
		if err != nil {
			t.Fatalf("%s: subscriber: %v after %q", addr, err, events)
		}
		if strings.Contains(string(b), "qbench-end") {
			return events, replies
		}
		events = append(events, string(b))
	}
}

// TestDiffRedisKeyspaceNotifications: the events each command publishes, their channels,
// payloads and order, against redis-server, for every class flag.
func TestDiffRedisKeyspaceNotifications(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{EnableDebugCommand: "yes"}) // as the redis-server it is compared with
	generic := []string{
		"SET k v", "SET k v2 EX 100", "SET k v3 PX 100 NX", "SET k v4 KEEPTTL", "EXPIRE k 1000", "PEXPIRE k 10 NX",
		"PERSIST k", "PERSIST k", "EXPIRE k 0", "EXPIRE nokey 10", "SET k v", "DEL k nokey", "UNLINK nokey",
		"INCR n", "INCRBY n 5", "DECR n", "INCRBYFLOAT f 1.5", "MSET a 1 b 2", "GETSET a 3", "GETSET c 1",
		"RENAME a z", "RENAMENX z b", "RENAMENX z y", "RENAME nokey x", "MOVE z 1", "SWAPDB 0 1", "FLUSHDB",
		"SET e v PX 1", "DEBUG SLEEP 0.01", "GET e", "SET g v PX 1", "DEBUG SLEEP 0.01", "EXISTS g",
	}
	lists := []string{
		"LPUSH l a b", "RPUSH l c", "LPUSHX l d", "RPUSHX nol x", "LPUSHX nol x", "LPOP l", "RPOP l 2", "LSET l 0 z",
		"LINSERT l BEFORE z y", "LINSERT l BEFORE nope y", "LREM l 0 y", "LTRIM l 0 0", "RPUSH l2 a b c",
		"LMOVE l2 l3 LEFT RIGHT", "RPOPLPUSH l2 l3", "LMOVE l2 l3 LEFT LEFT", "LMPOP 2 nol l3 RIGHT COUNT 5",
		"BLPOP l 0.01", "RPUSH l4 a", "BLPOP l4 0", "RPUSH l5 a b", "BLMPOP 0 1 l5 LEFT COUNT 9", "RPUSH l6 a",
		"BRPOPLPUSH l6 l7 0", "LTRIM l7 1 0", "LPOP nol", "RPOP l 0",
		"RPUSH r a b a c", "LREM r -1 a", "LREM r 1 x", "LREM r 2 a", "LREM r 0 c", "LREM r -1 b", "LREM r 1 b",
	}
	streams := []string{
		"XADD s 1-1 a 1", "XADD s 2-1 b 2", "XADD s MAXLEN 1 3-1 c 3", "XADD s MAXLEN 5 4-1 c 3", "XDEL s 4-1 9-9",
		"XDEL s 9-9", "XTRIM s MAXLEN 0", "XTRIM s MAXLEN 0", "XGROUP CREATE s g $", "XGROUP CREATE s g $",
		"XGROUP CREATE s2 g $ MKSTREAM", "XGROUP SETID s g 0", "XGROUP CREATECONSUMER s g c1",
		"XGROUP CREATECONSUMER s g c1", "XADD s 5-1 d 4", "XREADGROUP GROUP g c2 STREAMS s >",
		"XREADGROUP GROUP g c2 STREAMS s >", "XCLAIM s g c3 0 5-1", "XAUTOCLAIM s g c4 0 0", "XGROUP DELCONSUMER s g c1",
		"XGROUP DELCONSUMER s g nobody", "XGROUP DESTROY s g", "XGROUP DESTROY s g", "XSETID s 10-1", "XADD nomk NOMKSTREAM * a 1",
		"XACK s g 5-1", "DEL s s2",
	}
	setsHashes := []string{
		"SADD s a b", "SADD s a", "SREM s x", "SREM s a", "SREM s b", "SADD t 1 2 3", "SPOP t 3", "SADD u 1",
		"SPOP u", "SADD v 1 2", "SPOP v 0", "HSET h a 1 b 2", "HSET h a 2", "HMSET h c 3", "HINCRBY h n 1",
		"HDEL h x", "HDEL h a b c", "HDEL h n",
	}
	blocking := []string{
		"&BLPOP l 0", "LPUSH l a b", "<", "&BLMOVE src dst RIGHT LEFT 0", "RPUSH src x", "<",
		"XGROUP CREATE s g $ MKSTREAM", "&XREADGROUP GROUP g c BLOCK 0 STREAMS s >", "XADD s 1-1 f v", "<",
		"&XREADGROUP GROUP g c BLOCK 0 STREAMS s >", "DEL s", "<", "&BLMPOP 0 1 m LEFT COUNT 5",
		"MULTI", "RPUSH m a b", "RPUSH m c", "EXEC", "<", "&BLPOP q 0", "RPUSH q2 z", "RENAME q2 q", "<",
	}
	cases := []struct {
		name, flags string
		script      []string
		proto3      bool
	}{
		{"generic-KEA", "KEA", generic, false},
		{"generic-Kg", "Kg", generic, false},
		{"generic-E$", "E$", generic, false},
		{"generic-Kx", "Kx", generic, false},
		{"generic-KEn", "KEn", generic, false},
		{"generic-KEAn", "KEAn", generic, false},
		{"lists-KEA", "KEA", lists, false},
		{"lists-El", "El", lists, false},
		{"lists-KEAn-resp3", "KEAn", lists, true},
		{"streams-KEA", "KEA", streams, false},
		{"streams-Kt", "Kt", streams, false},
		{"streams-KEn", "KEn", streams, false},
		{"sets-hashes-KEA", "KEA", setsHashes, false},
		{"sets-hashes-Esh", "Esh", setsHashes, true},
		{"blocking-KEA", "KEA", blocking, false},
		{"blocking-KEAn", "KEAn", blocking, true},
		{"no-K-or-E", "A", generic, false},
		{"K-only", "K", generic, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			we, wr := notifyTrace(t, realAddr, tc.flags, tc.script, tc.proto3)
			ge, gr := notifyTrace(t, s.Addr(), tc.flags, tc.script, tc.proto3)
			var norm [2]normaliser
			for i := range wr {
				if i >= len(gr) {
					t.Fatalf("only %d replies from qbench", len(gr))
				}
				if norm[0].apply([]byte(wr[i]), false) != norm[1].apply([]byte(gr[i]), false) {
					t.Errorf("reply to %q: redis %q, qbench %q", tc.script[i], wr[i], gr[i])
				}
			}
			t.Logf("%d events", len(we))
			w, g := strings.Join(we, ""), strings.Join(ge, "")
			if w != g {
				t.Errorf("events differ:\n%s", sideBySide(we, ge))
			}
		})
	}
	// The flags as CONFIG GET shows them.
	var lines []string
	for _, f := range []string{"KEA", "Elgn", "g$lshzxetdn", "An", "AKE", "Km", "m", "KEm", "xe", "tdz", "", "Q", "KA$", "EEll"} {
		lines = append(lines, fmt.Sprintf("CONFIG SET notify-keyspace-events %q", f), "CONFIG GET notify-keyspace-events")
	}
	lines = append(lines, `CONFIG SET notify-keyspace-events ""`)
	runDiff(t, realAddr, s.Addr(), lines)
}

func sideBySide(a, b []string) string {
	var sb strings.Builder
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		mark := "  "
		if x != y {
			mark = "!="
		}
		fmt.Fprintf(&sb, "%s redis %q\n   qbench %q\n", mark, x, y)
	}
	return sb.String()
}
