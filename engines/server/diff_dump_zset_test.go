package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"qbench/engines/server/store"
)

// zsetDumpCases are sorted sets built the same way on both servers: small (listpack) ones with
// every kind of score, 128 and 129 members, a long member, a binary member, a skiplist holding
// -0 and scores beyond 2^62.
func zsetDumpCases() []struct {
	name  string
	setup []string
} {
	var m128, m129 []string
	for i := 0; i < 129; i++ {
		p := fmt.Sprintf("%d.25 m%d", i*7-300, i)
		if i < 128 {
			m128 = append(m128, p)
		}
		m129 = append(m129, p)
	}
	return []struct {
		name  string
		setup []string
	}{
		{"one", []string{"ZADD k 1 a"}},
		{"scores", []string{"ZADD k 1 a 1.1 b -0 c 0.1 d 1e20 e inf f -inf g 12345678901234567 h 3.5 i 4611686018427387904 j 4611686018427388928 l 1e-7 n 123 12 -70000 -5"}},
		{"binary-member", []string{"ZADD k 2 \"a\\x00b\\xff\" 1 \"\\r\\n\""}},
		{"128", []string{"ZADD k " + strings.Join(m128, " ")}},
		{"129", []string{"ZADD k " + strings.Join(m129, " ")}},
		{"grown-to-skiplist", []string{"ZADD k 1 a 2 b -0 c", "ZADD k 3 " + strings.Repeat("x", 65)}},
		{"long-member-removed", []string{"ZADD k 1 a 3 " + strings.Repeat("x", 65), "ZREM k " + strings.Repeat("x", 65)}},
		{"skiplist-negzero", []string{"ZADD k " + strings.Join(m129, " ") + " -0 z0 1e300 big -1e300 small 0.30000000000000004 f"}},
	}
}

// TestDiffRedisZsetDump: DUMP of the same sorted set is byte-identical on both servers with
// rdbcompression no and with yes (LZF); each server RESTOREs the other's compressed payload to
// the same ZRANGE ... WITHSCORES and OBJECT ENCODING.
func TestDiffRedisZsetDump(t *testing.T) {
	plain := dialRaw(t, startOwnRealRedis(t, "--rdbcompression", "no"))
	dflt := dialRaw(t, startOwnRealRedis(t)) // private: another test may CONFIG SET the shared one
	s := startServer(t, Config{})
	qc := dialRaw(t, s.Addr())
	do := func(c *rawConn, args ...[]byte) []byte { t.Helper(); return diffDo(t, c, args...) }
	line := func(c *rawConn, l string) []byte { t.Helper(); return do(c, splitLine(t, l)...) }
	for _, tc := range zsetDumpCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []*rawConn{plain, dflt, qc} {
				line(c, "FLUSHALL")
				for _, l := range tc.setup {
					if b := line(c, l); b[0] == '-' {
						t.Fatalf("%s: %q", l, b)
					}
				}
			}
			line(qc, "CONFIG SET rdbcompression no")
			ours := bulkBody(t, line(qc, "DUMP k"))
			if theirs := bulkBody(t, line(plain, "DUMP k")); !bytes.Equal(ours, theirs) {
				t.Errorf("DUMP differs from redis-server's (rdbcompression no):\nredis  %x\nqbench %x", theirs, ours)
			}
			line(qc, "CONFIG SET rdbcompression yes")
			ours = bulkBody(t, line(qc, "DUMP k"))
			theirs := bulkBody(t, line(dflt, "DUMP k"))
			if !bytes.Equal(ours, theirs) {
				t.Errorf("DUMP differs from redis-server's (rdbcompression yes):\nredis  %x\nqbench %x", theirs, ours)
			}
			if got := string(do(qc, []byte("RESTORE"), []byte("r"), []byte("0"), theirs)); got != "+OK\r\n" {
				t.Fatalf("RESTORE of Redis's payload here: %q", got)
			}
			if got := string(do(dflt, []byte("RESTORE"), []byte("r"), []byte("0"), ours)); got != "+OK\r\n" {
				t.Fatalf("RESTORE of our payload in Redis: %q", got)
			}
			for _, key := range []string{"k", "r"} {
				for _, read := range []string{"ZRANGE %s 0 -1 WITHSCORES", "OBJECT ENCODING %s"} {
					want, got := line(dflt, fmt.Sprintf(read, key)), line(qc, fmt.Sprintf(read, key))
					if !bytes.Equal(want, got) {
						t.Errorf(read+": redis %q, qbench %q", key, want, got)
					}
				}
			}
		})
	}
}

// zsetPayload wraps an RDB object in DUMP's footer with RDB version ver.
func zsetPayload(obj []byte, ver uint16) []byte {
	p := binary.LittleEndian.AppendUint16(append([]byte(nil), obj...), ver)
	return binary.LittleEndian.AppendUint64(p, store.CRC64(p))
}

// ziplistOf is a ziplist of short strings (Redis 6 stored integers as integers; a string entry
// is valid too).
func ziplistOf(elems ...string) []byte {
	b := make([]byte, 10)
	prev := 0
	for _, e := range elems {
		at := len(b)
		b = append(append(b, byte(prev), byte(len(e))), e...)
		prev = len(b) - at
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-1-prev))
	binary.LittleEndian.PutUint16(b[8:], uint16(len(elems)))
	return b
}

// TestDiffRedisZsetOldPayloads: payloads in the encodings older Redis wrote (ZSET_ZIPLIST of
// Redis 6, ZSET with text scores of Redis < 5), and damaged ones, RESTORE the same on both.
func TestDiffRedisZsetOldPayloads(t *testing.T) {
	rc := dialRaw(t, startRealRedis(t))
	qc := dialRaw(t, startServer(t, Config{}).Addr())
	// In order, as Redis 6 kept it (Redis 7.0 loads a packed zset as it is, without sorting).
	zl := ziplistOf("c", "-inf", "12", "0.10000000000000001", "a", "1", "b", "3.5", "d", "inf")
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	text := cat(str("a"), str("1.5"), str("b"), []byte{254}, str("c"), []byte{255}, str("d"), str("-0"))
	var big []string
	for i := 0; i < 130; i++ {
		big = append(big, fmt.Sprintf("m%03d", i), fmt.Sprint(i))
	}
	for _, tc := range []struct {
		name string
		p    []byte
		ok   bool // restored (else refused) by both
	}{
		{"ziplist", zsetPayload(cat([]byte{12, 0x40 | byte(len(zl)>>8), byte(len(zl))}, zl), 9), true},
		{"ziplist-130", zsetPayload(cat([]byte{12, 0x80}, binary.BigEndian.AppendUint32(nil, uint32(len(ziplistOf(big...)))), ziplistOf(big...)), 9), true},
		{"zset-text", zsetPayload(cat([]byte{3, 4}, text), 9), true},
		{"zset-text-nan", zsetPayload(cat([]byte{3, 1}, str("a"), []byte{253}), 9), false},
		{"zset2-empty", zsetPayload([]byte{5, 0}, 10), false},
		{"zset2-dup", zsetPayload(cat([]byte{5, 2}, str("a"), make([]byte, 8), str("a"), make([]byte, 8)), 10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var replies [2]string
			for i, c := range []*rawConn{rc, qc} {
				c.send(splitLine(t, "DEL r"))
				c.readReply(5 * time.Second)
				var out []string
				for _, args := range [][][]byte{{[]byte("RESTORE"), []byte("r"), []byte("0"), tc.p},
					splitLine(t, "ZRANGE r 0 -1 WITHSCORES"), splitLine(t, "OBJECT ENCODING r")} {
					c.send(args)
					b, err := c.readReply(5 * time.Second)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, string(b))
				}
				replies[i] = strings.Join(out, " | ")
			}
			if strings.HasPrefix(replies[0], "+OK") != tc.ok {
				t.Fatalf("redis-server: %q: the case tests something else than meant", replies[0])
			}
			if replies[0] != replies[1] {
				t.Errorf("redis  %q\nqbench %q", replies[0], replies[1])
			}
		})
	}
}

func cat(parts ...[]byte) (b []byte) {
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
