package server

import (
	"fmt"
	"strings"
	"testing"

	"qbench/engines/server/resp"
)

// TestDiffRedisDumpRestore: a key DUMPed by redis-server RESTOREs here to the same value and
// encoding, and a key DUMPed here RESTOREs in redis-server: strings (ints, short, long and
// compressible), lists (small, several nodes, long elements), sets (intset, hashtable) and
// hashes (listpack, hashtable).
func TestDiffRedisDumpRestore(t *testing.T) {
	realAddr := startRealRedis(t)
	s := startServer(t, Config{})
	long := strings.Repeat("abcdefgh", 40) // LZF-compressible in Redis's own DUMP
	var bigList, bigSet, bigHash []string
	for i := 0; i < 300; i++ {
		bigList = append(bigList, fmt.Sprintf("e%d", i), fmt.Sprint(i*1000-70000))
		bigSet = append(bigSet, fmt.Sprint(i*100000))
		bigHash = append(bigHash, fmt.Sprintf("f%d", i), fmt.Sprint(i))
	}
	cases := []struct {
		name  string
		setup []string
		read  string
	}{
		{"int", []string{"SET k 12345"}, "GET"},
		{"negative-int", []string{"SET k -70000"}, "GET"},
		{"big-int", []string{"SET k 9223372036854775807"}, "GET"},
		{"short", []string{"SET k hello"}, "GET"},
		{"long", []string{"SET k " + long}, "GET"},
		{"binary", []string{"SET k \"a\\x00b\\xffc\""}, "GET"},
		{"list", []string{"RPUSH k a 1 -5 300 70000 -3000000000 " + long}, "LRANGE"},
		{"list-many", []string{"RPUSH k " + strings.Join(bigList, " ")}, "LRANGE"},
		{"intset", []string{"SADD k 5 -3 100000 7000000000"}, "SMEMBERS"},
		{"intset-big", []string{"SADD k " + strings.Join(bigSet, " ")}, "SMEMBERS"},
		{"set-one-string", []string{"SADD k only"}, "SMEMBERS"},
		{"hash", []string{"HSET k z 1 a two m " + long[:60]}, "HGETALL"},
		{"hash-many", []string{"HSET k " + strings.Join(bigHash, " ")}, "HLEN"},
		{"hash-long-value", []string{"HSET k f " + long}, "HGET f"},
		{"stream-empty", []string{"XGROUP CREATE k g $ MKSTREAM"}, "XINFO"},
		{"stream", streamSetup(), "XINFO"},
		{"stream-deleted-and-trimmed", append(streamSetup(), "XDEL k 3-1 250-1 7-1", "XTRIM k MINID 5", "XSETID k 900-1"), "XINFO"},
	}
	readCmd := func(read, key string) string {
		switch read {
		case "LRANGE":
			return "LRANGE " + key + " 0 -1"
		case "HGET f":
			return "HGET " + key + " f"
		case "HLEN":
			return "HGET " + key + " f299"
		case "XINFO":
			return "XINFO STREAM " + key + " FULL"
		}
		return read + " " + key
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc, qc := dialRaw(t, realAddr), dialRaw(t, s.Addr())
			do := func(c *rawConn, args ...[]byte) []byte { return diffDo(t, c, args...) }
			line := func(c *rawConn, l string) []byte { return do(c, splitLine(t, l)...) }
			for _, c := range []*rawConn{rc, qc} {
				line(c, "FLUSHALL")
				for _, l := range tc.setup {
					line(c, l)
				}
			}
			// Redis's payload into ours, ours into Redis.
			fromRedis := bulkBody(t, do(rc, []byte("DUMP"), []byte("k")))
			fromUs := bulkBody(t, do(qc, []byte("DUMP"), []byte("k")))
			if got := string(do(qc, []byte("RESTORE"), []byte("r"), []byte("0"), fromRedis)); got != "+OK\r\n" {
				t.Fatalf("RESTORE of Redis's payload here: %q", got)
			}
			if got := string(do(rc, []byte("RESTORE"), []byte("r"), []byte("0"), fromUs)); got != "+OK\r\n" {
				t.Fatalf("RESTORE of our payload in Redis: %q", got)
			}
			for _, key := range []string{"k", "r"} {
				var norm [2]normaliser // delivery and seen times differ by when each server ran
				want := norm[0].apply(line(rc, readCmd(tc.read, key)), false)
				got := norm[1].apply(line(qc, readCmd(tc.read, key)), false)
				if tc.read != "SMEMBERS" || strings.Contains(tc.name, "intset") {
					if want != got {
						t.Errorf("%s %s: redis %q, qbench %q", tc.read, key, want, got)
					}
				}
				we, ge := line(rc, "OBJECT ENCODING "+key), line(qc, "OBJECT ENCODING "+key)
				if string(we) != string(ge) {
					t.Errorf("OBJECT ENCODING %s: redis %q, qbench %q", key, we, ge)
				}
			}
		})
	}
	// Errors and options, as scripts.
	runDiffCases(t, []diffCase{
		{"errors", `
			DUMP nokey
			SET k v
			RESTORE k 0 x
			RESTORE n 0 x
			RESTORE n -1 x
			RESTORE n x x
			RESTORE n 0 "\x00\x01v\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00"
			RESTORE n 0 x REPLACE FOO
			RESTORE n 0 x IDLETIME -1
			RESTORE n 0 x FREQ 300
			RESTORE n 0 x IDLETIME 1 FREQ 1
			RESTORE n 0 x FREQ x`},
	})
}

// streamSetup builds a stream over several nodes with mixed fields, two groups, consumers with
// and without pending entries, and claimed entries.
func streamSetup() []string {
	var l []string
	for i := 1; i <= 260; i++ {
		f := fmt.Sprintf("XADD k %d-1 a %d b x", i, i)
		if i%9 == 0 {
			f = fmt.Sprintf("XADD k %d-1 other %d", i, -i*1000)
		}
		l = append(l, f)
	}
	return append(l, "XGROUP CREATE k g1 0", "XGROUP CREATE k g2 100-1 ENTRIESREAD 100",
		"XREADGROUP GROUP g1 c1 COUNT 5 STREAMS k >", "XREADGROUP GROUP g1 c2 COUNT 3 STREAMS k >",
		"XCLAIM k g1 c3 0 2-1", "XGROUP CREATECONSUMER k g1 idle", "XREADGROUP GROUP g2 c1 COUNT 2 STREAMS k >",
		"XACK k g1 1-1")
}

func splitLine(t *testing.T, l string) [][]byte {
	args, ok := resp.SplitArgs([]byte(l))
	if !ok {
		t.Fatalf("cannot split %q", l)
	}
	return args
}

// bulkBody returns a bulk reply's payload.
func bulkBody(t *testing.T, b []byte) []byte {
	t.Helper()
	i := strings.Index(string(b), "\r\n")
	if len(b) == 0 || b[0] != '$' || i < 0 {
		t.Fatalf("not a bulk reply: %q", b)
	}
	return b[i+2 : len(b)-2]
}
