package server

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// lzfStrings are values for DUMP's string encodings: integers, at most 20 bytes (never
// compressed), 21 bytes and up, compressible (repeats, a small alphabet, runs longer than a
// back reference, matches ending at the value's end) and not (random bytes, short repeats that
// save under 4 bytes), up to more than LZF's 8 KiB window.
func lzfStrings() map[string][]byte {
	rng := rand.New(rand.NewSource(7))
	random := func(n int, alphabet string) []byte {
		b := make([]byte, n)
		for i := range b {
			if alphabet == "" {
				b[i] = byte(rng.Intn(256))
			} else {
				b[i] = alphabet[rng.Intn(len(alphabet))]
			}
		}
		return b
	}
	cases := map[string][]byte{
		"int":          []byte("-70000"),
		"20-repeat":    bytes.Repeat([]byte("a"), 20),
		"21-repeat":    bytes.Repeat([]byte("a"), 21),
		"22-abc":       bytes.Repeat([]byte("abc"), 22)[:22],
		"21-random":    random(21, ""),
		"25-saves-3":   []byte("abcdefghijklmnopqrstuvabc"),
		"300-run":      bytes.Repeat([]byte("x"), 300),
		"long-runs":    bytes.Repeat([]byte(strings.Repeat("y", 280)+"z"), 9),
		"text":         []byte(strings.Repeat("the quick brown fox jumps over the lazy dog; ", 40)),
		"window":       append(append(random(9000, ""), random(40, "ab")...), random(9000, "")...),
		"ends-in-run":  append(random(50, ""), bytes.Repeat([]byte("q"), 40)...),
		"ends-17":      append(random(30, ""), bytes.Repeat([]byte("r"), 19)...),
		"ends-18":      append(random(30, ""), bytes.Repeat([]byte("r"), 20)...),
		"random-4k":    random(4096, ""),
		"binary-runs":  bytes.Repeat(append([]byte{0, 0, 0, 255}, random(5, "")...), 60),
		"small-alpha":  random(20000, "ab"),
		"alpha-digits": random(3000, "0123456789abcdef"),
	}
	for n := 21; n <= 64; n++ { // every length near the thresholds, a few patterns each
		cases[fmt.Sprintf("len%d-ab", n)] = random(n, "ab")
		cases[fmt.Sprintf("len%d-abcd", n)] = random(n, "abcd")
		cases[fmt.Sprintf("len%d-rep5", n)] = bytes.Repeat([]byte("hello"), 13)[:n]
	}
	for i := 0; i < 60; i++ { // mixtures of random pieces and copies of earlier pieces
		var b []byte
		for len(b) < 40+i*50 {
			if len(b) > 8 && rng.Intn(2) == 0 {
				at := rng.Intn(len(b) - 4)
				b = append(b, b[at:at+4+rng.Intn(min(len(b)-at-4, 300)+1)]...)
			} else {
				b = append(b, random(1+rng.Intn(12), "abcdefgh")...)
			}
		}
		cases[fmt.Sprintf("mix%d", i)] = b
	}
	return cases
}

// diffDo sends one command and returns its raw reply.
func diffDo(t *testing.T, c *rawConn, args ...[]byte) []byte {
	t.Helper()
	c.send(args)
	b, err := c.readReply(5 * time.Second)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return b
}

// TestDiffRedisDumpLZF: with rdbcompression yes on both servers (the default), DUMP of the same
// string is byte-identical to redis-server's for every case of lzfStrings, and each server
// RESTOREs the other's payload to the same value; CONFIG SET rdbcompression no turns
// compression off as in Redis.
func TestDiffRedisDumpLZF(t *testing.T) {
	rc := dialRaw(t, startOwnRealRedis(t))
	s := startServer(t, Config{})
	qc := dialRaw(t, s.Addr())
	cases := lzfStrings()
	compressed := 0
	for _, rdbcomp := range []string{"yes", "no"} {
		for _, c := range []*rawConn{rc, qc} {
			if got := string(diffDo(t, c, []byte("CONFIG"), []byte("SET"), []byte("rdbcompression"), []byte(rdbcomp))); got != "+OK\r\n" {
				t.Fatalf("CONFIG SET rdbcompression %s: %q", rdbcomp, got)
			}
		}
		for name, v := range cases {
			key := []byte(name)
			diffDo(t, rc, []byte("SET"), key, v)
			diffDo(t, qc, []byte("SET"), key, v)
			theirs := bulkBody(t, diffDo(t, rc, []byte("DUMP"), key))
			ours := bulkBody(t, diffDo(t, qc, []byte("DUMP"), key))
			if !bytes.Equal(ours, theirs) {
				t.Errorf("rdbcompression %s, %s (%d bytes): DUMP differs\nredis  %x\nqbench %x", rdbcomp, name, len(v), theirs, ours)
				continue
			}
			if len(ours) > 1 && ours[1] == 0xc3 {
				compressed++
			}
			for _, pair := range [][2]*rawConn{{rc, qc}, {qc, rc}} {
				p := bulkBody(t, diffDo(t, pair[0], []byte("DUMP"), key))
				if got := string(diffDo(t, pair[1], []byte("RESTORE"), []byte("r"), []byte("0"), p, []byte("REPLACE"))); got != "+OK\r\n" {
					t.Fatalf("%s: RESTORE: %q", name, got)
				}
				if got := bulkBody(t, diffDo(t, pair[1], []byte("GET"), []byte("r"))); !bytes.Equal(got, v) {
					t.Fatalf("%s: RESTOREd value differs", name)
				}
			}
		}
		if rdbcomp == "no" && compressed != 0 || rdbcomp == "yes" && compressed < len(cases)/2 {
			t.Errorf("rdbcompression %s: %d of %d payloads LZF-compressed", rdbcomp, compressed, len(cases))
		}
		compressed = 0
	}
	if got := string(diffDo(t, qc, []byte("CONFIG"), []byte("GET"), []byte("rdbcompression"))); got != "*2\r\n$14\r\nrdbcompression\r\n$2\r\nno\r\n" {
		t.Errorf("CONFIG GET rdbcompression: %q", got)
	}
}

// TestDiffRedisDumpLZFTypes: with rdbcompression yes, DUMP of lists (one node), listpack hashes,
// intsets, sorted sets of both encodings and streams without consumer groups is byte-identical
// to redis-server's, their long members and listpacks LZF-compressed as Redis's are; every case
// (hashtable sets and hashes too, whose order differs) RESTOREs in the other server to the same
// value.
func TestDiffRedisDumpLZFTypes(t *testing.T) {
	rc := dialRaw(t, startOwnRealRedis(t))
	s := startServer(t, Config{})
	qc := dialRaw(t, s.Addr())
	long := strings.Repeat("compressible-member-", 5)
	var nums, pairs, scored, members []string
	for i := 0; i < 100; i++ {
		nums = append(nums, fmt.Sprint(i*1000+7))
		pairs = append(pairs, fmt.Sprintf("field:%d", i), fmt.Sprintf("value:%d:%s", i, long[:i%40]))
		scored = append(scored, fmt.Sprintf("%d.5 member:%d", i, i))
		members = append(members, fmt.Sprintf("member:%d:%s", i, long[:i%30]))
	}
	var xadd []string
	for i := 1; i <= 230; i++ {
		xadd = append(xadd, fmt.Sprintf("XADD k %d-%d sensor temperature reading %d unit celsius", i, i%3, i%17))
	}
	cases := []struct {
		name      string
		setup     []string
		identical bool
		read      string
	}{
		{"list", []string{"RPUSH k " + strings.Join(members, " ")}, true, "LRANGE k 0 -1"},
		{"list-long-element", []string{"RPUSH k a " + long + " 12 " + long}, true, "LRANGE k 0 -1"},
		{"list-many-nodes", []string{"RPUSH k " + strings.Repeat(strings.Join(members, " ")+" ", 3)}, false, "LRANGE k 0 -1"},
		{"hash-listpack", []string{"HSET k " + strings.Join(pairs, " ")}, true, "HGETALL k"},
		{"hash-hashtable", []string{"HSET k " + strings.Join(pairs, " ") + " big " + strings.Repeat(long, 4)}, false, "HGET k field:77"},
		{"intset", []string{"SADD k " + strings.Join(nums, " ")}, true, "SMEMBERS k"},
		{"set-hashtable", []string{"SADD k " + strings.Join(members, " ")}, false, "SISMEMBER k member:42:" + long[:12]},
		{"zset-listpack", []string{"ZADD k " + strings.Join(scored, " ")}, true, "ZRANGE k 0 -1 WITHSCORES"},
		{"zset-skiplist", []string{"ZADD k " + strings.Join(scored, " ") + " 1 " + strings.Repeat(long, 4)}, true, "ZRANGE k 0 -1 WITHSCORES"},
		{"stream", xadd, true, "XRANGE k - +"},
		{"stream-groups", append(append([]string(nil), xadd...), "XGROUP CREATE k consumer-group-with-a-long-name 0",
			"XREADGROUP GROUP consumer-group-with-a-long-name consumer-with-a-long-name-too COUNT 3 STREAMS k >"), false, "XINFO STREAM k"},
	}
	line := func(c *rawConn, l string) []byte { t.Helper(); return diffDo(t, c, splitLine(t, l)...) }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []*rawConn{rc, qc} {
				line(c, "FLUSHALL")
				for _, l := range tc.setup {
					if b := line(c, l); b[0] == '-' {
						t.Fatalf("%s: %q", l, b)
					}
				}
			}
			theirs, ours := bulkBody(t, line(rc, "DUMP k")), bulkBody(t, line(qc, "DUMP k"))
			if tc.identical && !bytes.Equal(ours, theirs) {
				t.Errorf("DUMP differs\nredis  %x\nqbench %x", theirs, ours)
			}
			if !bytes.Contains(ours, []byte{0xc3}) {
				t.Errorf("no LZF string in our payload %x", ours)
			}
			for _, pair := range [][2]*rawConn{{rc, qc}, {qc, rc}} {
				p := bulkBody(t, line(pair[0], "DUMP k"))
				if got := string(diffDo(t, pair[1], []byte("RESTORE"), []byte("r"), []byte("0"), p)); got != "+OK\r\n" {
					t.Fatalf("RESTORE: %q", got)
				}
			}
			read := strings.Replace(tc.read, " k", " r", 1)
			if tc.read == "XINFO STREAM k" { // times differ: compare lengths and last IDs
				read = "XLEN r"
			}
			if want, got := line(rc, read), line(qc, read); !bytes.Equal(want, got) {
				t.Errorf("%s: redis %q, qbench %q", read, want, got)
			}
		})
	}
}
