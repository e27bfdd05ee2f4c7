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
