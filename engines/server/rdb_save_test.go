package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"qbench/engines/server/store"
)

// TestSaveRDBLoadedByRedis: a dump.rdb written by SaveRDB (rdbcompression yes: LZF-compressed
// names, values, listpacks) is loaded by redis-server 7.0.15 at start, and it then answers as a
// redis-server given the same commands does: values, encodings, groups, PELs, consumers, TTLs,
// databases. The file also reads back here (ReadRDBFile) to the same DUMP payloads (hashtable
// sets aside: their order is map order).
func TestSaveRDBLoadedByRedis(t *testing.T) {
	long := strings.Repeat("abcdefgh", 100)
	var big, bigHash []string
	for i := 0; i < 300; i++ {
		big = append(big, fmt.Sprintf("element-%d", i))
		bigHash = append(bigHash, fmt.Sprintf("f%d", i), fmt.Sprint(i))
	}
	setup := append(streamSetup(),
		"RPUSH small a 1 -5 300 "+long,
		"RPUSH big "+strings.Join(big, " "),
		"SADD ints 5 -3 100000 7000000000",
		"SADD strs "+strings.Join(big, " "),
		"HSET h z 1 a two "+long[:60]+" x",
		"HSET hbig "+strings.Join(bigHash, " "),
		"ZADD z 1 a 2.5 b -0 "+long[:40]+" inf c",
		"ZADD zbig 1 "+long+" 2 b 3 c",
		"SET s hello", "SET n 12345", "SET long "+long, "SET "+long[:100]+" compressed-key-name",
		"SET ttl v PX 600000",
		"SELECT 3", "SET d3 three", "RPUSH d3list x y", "SELECT 0")
	rc := dialRaw(t, startOwnRealRedis(t))
	s := startServer(t, Config{})
	qc := dialRaw(t, s.Addr())
	for _, l := range setup {
		for _, c := range []*rawConn{rc, qc} {
			if b := doLine(t, c, l); strings.HasPrefix(b, "-") {
				t.Fatalf("%s: %q", l, b)
			}
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	if err := s.SaveRDB(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(long)) || !bytes.Contains(data, []byte{0xc3}) {
		t.Fatal("the file's long strings are not LZF-compressed")
	}
	r, err := launchRedis(differentialRedis(t), dir)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
		t.Fatalf("redis-server on our dump.rdb: %v\n%s", err, log)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Process.Wait() })
	lc := dialRaw(t, r.addr)
	var norm [2]normaliser
	for _, tc := range []struct{ db, read string }{
		{"0", "XINFO STREAM k FULL"}, {"0", "XPENDING k g2"}, {"0", "XINFO GROUPS k"},
		{"0", "LRANGE small 0 -1"}, {"0", "LRANGE big 0 -1"}, {"0", "SMEMBERS ints"}, {"0", "SCARD strs"},
		{"0", "SISMEMBER strs element-299"}, {"0", "HGETALL h"}, {"0", "HGET hbig f299"},
		{"0", "ZRANGE z 0 -1 WITHSCORES"}, {"0", "ZRANGE zbig 0 -1 WITHSCORES"},
		{"0", "GET s"}, {"0", "GET n"}, {"0", "GET long"}, {"0", "GET " + long[:100]}, {"0", "DBSIZE"},
		{"3", "GET d3"}, {"3", "LRANGE d3list 0 -1"}, {"3", "DBSIZE"},
	} {
		doLine(t, rc, "SELECT "+tc.db)
		doLine(t, lc, "SELECT "+tc.db)
		want, got := norm[0].apply([]byte(doLine(t, rc, tc.read)), false), norm[1].apply([]byte(doLine(t, lc, tc.read)), false)
		if strings.HasPrefix(want, "-") || want != got {
			t.Errorf("db %s %s:\nredis            %q\nredis, our file %q", tc.db, tc.read, want, got)
		}
	}
	doLine(t, rc, "SELECT 0")
	doLine(t, lc, "SELECT 0")
	for _, k := range []string{"k", "small", "big", "ints", "strs", "h", "hbig", "z", "zbig", "s", "n", "long"} {
		if w, g := doLine(t, rc, "OBJECT ENCODING "+k), doLine(t, lc, "OBJECT ENCODING "+k); w != g {
			t.Errorf("OBJECT ENCODING %s: redis %q, redis on our file %q", k, w, g)
		}
	}
	if g, _ := strconv.Atoi(strings.Trim(doLine(t, lc, "PTTL ttl"), ":\r\n")); g <= 0 || g > 600000 {
		t.Errorf("PTTL ttl on our file: %d", g)
	}
	keys, err := store.ReadRDBFile(data, testRDBLimits(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if set, ok := k.Value.(*store.Set); ok && !set.IsIntset() {
			continue // a hashtable set's members come in map order
		}
		doLine(t, qc, fmt.Sprintf("SELECT %d", k.DB))
		want := bulkBody(t, diffDo(t, qc, []byte("DUMP"), []byte(k.Key)))
		if got, _ := store.AppendRDBDump(nil, k.Value, true); !bytes.Equal(got, want) {
			t.Errorf("key %q read back from the file dumps differently", k.Key)
		}
	}
}

func testRDBLimits(s *Server) store.RDBLimits {
	st := s.conf
	return store.RDBLimits{
		IntsetMax: st.setMaxIntsetEntries, HashMaxEntries: st.hashMaxListpackEntries, HashMaxValue: st.hashMaxListpackValue,
		ZsetMaxEntries: st.zsetMaxListpackEntries, ZsetMaxValue: st.zsetMaxListpackValue,
		NodeMaxEntries: st.streamNodeMaxEntries, NodeMaxBytes: st.streamNodeMaxBytes}
}
