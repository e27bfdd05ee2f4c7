package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seedFromRedis fills a private redis-server with setup (lines in the harness's syntax), SAVEs
// and returns its dump.rdb's bytes and the client connection to it, still holding the data.
func seedFromRedis(t *testing.T, setup []string) ([]byte, *rawConn) {
	t.Helper()
	rc := dialRaw(t, startOwnRealRedis(t)) // rdbcompression and rdbchecksum: Redis's defaults
	for _, l := range append(setup, "SAVE") {
		rc.send(splitLine(t, l))
		b, err := rc.readReply(5 * time.Second)
		if err != nil || b[0] == '-' {
			t.Fatalf("redis %q: %q %v", l, b, err)
		}
	}
	return redisDump(t, rc), rc
}

// redisDump reads the dump.rdb of the redis-server behind rc.
func redisDump(t *testing.T, rc *rawConn) []byte {
	t.Helper()
	rc.send(splitLine(t, "CONFIG GET dir"))
	b, err := rc.readReply(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), "\r\n") // *2 $3 dir $N <dir>
	data, err := os.ReadFile(filepath.Join(parts[4], "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeTemp(t *testing.T, data []byte) string {
	path := filepath.Join(t.TempDir(), "dump.rdb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSeedFromRedisRDB: a dump.rdb saved by redis-server seeds our server with the same data,
// encodings, groups, pending entries, consumers and TTLs, in every database it used.
func TestSeedFromRedisRDB(t *testing.T) {
	var big, bigSet, bigHash []string
	for i := 0; i < 300; i++ {
		big = append(big, fmt.Sprintf("e%d", i), fmt.Sprint(i*1000-70000))
		bigSet = append(bigSet, fmt.Sprintf("m%d", i))
		bigHash = append(bigHash, fmt.Sprintf("f%d", i), fmt.Sprint(i))
	}
	long := strings.Repeat("abcdefgh", 100) // LZF-compressed in the file
	setup := append(streamSetup(),          // stream k: 260 entries, groups g1 and g2, PEL, consumers
		"RPUSH small a 1 -5 300 "+long,
		"RPUSH big "+strings.Join(big, " "),
		"SADD ints 5 -3 100000 7000000000",
		"SADD strs "+strings.Join(bigSet, " "),
		"HSET h z 1 a two",
		"HSET hbig "+strings.Join(bigHash, " "),
		"SET s hello", "SET n 12345", "SET long "+long,
		"SET ttl v PX 600000",
		"SELECT 3", "SET d3 three", "RPUSH d3list x y",
		// An expired key Redis has not deleted yet is in the file: loading drops it.
		"SELECT 5", "DEBUG SET-ACTIVE-EXPIRE 0", "SET gone v PX 1", "DEBUG SLEEP 0.01", "SELECT 0")
	data, rc := seedFromRedis(t, setup)
	if !strings.Contains(string(data), "gone") {
		t.Fatal("redis-server did not save the expired key: the expiry check below tests nothing")
	}
	s := startServer(t, Config{SeedRDB: writeTemp(t, data)})
	qc := dialRaw(t, s.Addr())
	do := func(c *rawConn, l string) string { return doLine(t, c, l) }
	var norm [2]normaliser
	for _, tc := range []struct {
		db   string
		read string
		// sorted: an unordered reply (SMEMBERS of a hashtable set), compared as a sorted list
		sorted bool
		// idle: the reply holds idle times, compared as "#" (XINFO STREAM FULL has the counts)
		idle bool
	}{
		{db: "0", read: "XINFO STREAM k FULL"},
		{db: "0", read: "XPENDING k g1 - + 100", idle: true},
		{db: "0", read: "XPENDING k g2"},
		{db: "0", read: "XINFO GROUPS k"},
		{db: "0", read: "LRANGE small 0 -1"},
		{db: "0", read: "LRANGE big 0 -1"},
		{db: "0", read: "SMEMBERS ints"},
		{db: "0", read: "SMEMBERS strs", sorted: true},
		{db: "0", read: "HGETALL h"},
		{db: "0", read: "HGET hbig f299"},
		{db: "0", read: "HGET hbig f0"},
		{db: "0", read: "GET s"}, {db: "0", read: "GET n"}, {db: "0", read: "GET long"},
		{db: "0", read: "DBSIZE"},
		{db: "3", read: "GET d3"}, {db: "3", read: "LRANGE d3list 0 -1"}, {db: "3", read: "DBSIZE"},
		{db: "5", read: "EXISTS gone"},
	} {
		do(rc, "SELECT "+tc.db)
		do(qc, "SELECT "+tc.db)
		want, got := norm[0].apply([]byte(do(rc, tc.read)), tc.idle), norm[1].apply([]byte(do(qc, tc.read)), tc.idle)
		if strings.HasPrefix(want, "-") {
			t.Fatalf("redis %s: %q", tc.read, want) // an error on both sides would compare equal
		}
		if tc.sorted {
			want, got = sortedLines(want), sortedLines(got)
		}
		if want != got {
			t.Errorf("db %s %s:\nredis  %q\nqbench %q", tc.db, tc.read, want, got)
		}
	}
	do(rc, "SELECT 0")
	do(qc, "SELECT 0")
	for _, k := range []string{"k", "small", "big", "ints", "strs", "h", "hbig", "s", "n", "long"} {
		if w, g := do(rc, "OBJECT ENCODING "+k), do(qc, "OBJECT ENCODING "+k); w != g {
			t.Errorf("OBJECT ENCODING %s: redis %q, qbench %q", k, w, g)
		}
	}
	w, _ := strconv.Atoi(strings.Trim(do(rc, "PTTL ttl"), ":\r\n"))
	g, _ := strconv.Atoi(strings.Trim(do(qc, "PTTL ttl"), ":\r\n"))
	if g <= 0 || g > 600000 || w-g > 5000 || g-w > 5000 {
		t.Errorf("PTTL ttl: redis %d, qbench %d", w, g)
	}
	// Expired keys read as missing either way; the count of keys loaded shows it was dropped.
	if info := do(qc, "INFO persistence"); !strings.Contains(info, "loaded_records:13\r\n") {
		t.Errorf("want 13 keys loaded (the expired one dropped):\n%s", info)
	}
	if got := do(qc, "PTTL s"); got != ":-1\r\n" {
		t.Errorf("PTTL s = %q, want no expiry", got)
	}
}

// TestSeedZsetsFromRedisRDB: sorted sets in a dump.rdb saved by redis-server (listpack and
// skiplist, LZF-compressed members and listpacks, edge scores, in two databases) seed our server
// with the same ZRANGE ... WITHSCORES and OBJECT ENCODING as Redis's own load of the file.
func TestSeedZsetsFromRedisRDB(t *testing.T) {
	var setup, keys []string
	for i, tc := range zsetDumpCases() {
		db := fmt.Sprint(i % 2)
		setup = append(setup, "SELECT "+db)
		for _, l := range tc.setup {
			setup = append(setup, strings.Replace(l, " k ", fmt.Sprintf(" k%d ", i), 1))
		}
		keys = append(keys, db+" "+fmt.Sprintf("k%d", i))
	}
	long := strings.Repeat("abcdefgh", 20)
	setup = append(setup, "SELECT 0", "ZADD lzf 1 "+long+"1 2 "+long+"2 3 "+long+"3", "ZADD lzfbig 1 "+long+strings.Repeat("z", 64))
	keys = append(keys, "0 lzf", "0 lzfbig")
	data, rc := seedFromRedis(t, setup)
	qc := dialRaw(t, startServer(t, Config{SeedRDB: writeTemp(t, data)}).Addr())
	do := func(c *rawConn, l string) string { return doLine(t, c, l) }
	// Compared with Redis after it loads the same file: a skiplist small again (k6) becomes a
	// listpack on load there too.
	if got := do(rc, "DEBUG RELOAD NOSAVE"); got != "+OK\r\n" {
		t.Fatalf("DEBUG RELOAD: %q", got)
	}
	for _, k := range keys {
		db, key, _ := strings.Cut(k, " ")
		do(rc, "SELECT "+db)
		do(qc, "SELECT "+db)
		for _, read := range []string{"ZRANGE " + key + " 0 -1 WITHSCORES", "OBJECT ENCODING " + key} {
			want, got := do(rc, read), do(qc, read)
			if strings.HasPrefix(want, "-") || want == "*0\r\n" {
				t.Fatalf("redis %s: %q", read, want)
			}
			if want != got {
				t.Errorf("db %s %s:\nredis  %q\nqbench %q", db, read, want, got)
			}
		}
	}
}

func sortedLines(s string) string {
	l := strings.Split(s, "\r\n")
	sort.Strings(l)
	return strings.Join(l, "\r\n")
}

// TestSeedRefusals: a file this server cannot load in full is refused at Start, naming the
// offset and (for a type it lacks) the key, its db and its type; nothing is served.
func TestSeedRefusals(t *testing.T) {
	good, rc := seedFromRedis(t, []string{"SET a 1", `FUNCTION LOAD "#!lua name=lib\nredis.register_function('f', function() return 1 end)"`})
	// The same server again without the function: a loadable file to damage.
	for _, l := range []string{"FUNCTION FLUSH", "RPUSH l " + strings.Repeat("x ", 200), "SAVE"} {
		rc.send(splitLine(t, l))
		if _, err := rc.readReply(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	loadable := redisDump(t, rc)
	damaged := append([]byte(nil), loadable...)
	damaged[len(damaged)-20] ^= 0x55 // inside the last value's listpack
	badCRC := append([]byte(nil), loadable...)
	badCRC[len(badCRC)-1] ^= 1
	for _, tc := range []struct {
		name string
		data []byte
		want []string
	}{
		{"function", good, []string{"function library", "offset "}},
		{"truncated", loadable[:len(loadable)/2], []string{"offset ", "truncated"}},
		{"no-checksum", loadable[:len(loadable)-4], []string{"offset ", "checksum"}},
		{"damaged-value", damaged, []string{"offset ", `key "l" in db 0`}},
		{"bad-crc", badCRC, []string{"offset ", "CRC-64"}},
		{"not-rdb", []byte("hello world"), []string{"offset 0", "not an RDB file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Dir: t.TempDir(), SeedRDB: writeTemp(t, tc.data)})
			err := s.Start()
			if err == nil {
				s.Close()
				t.Fatal("the file was loaded")
			}
			if !errors.Is(err, ErrSeed) {
				t.Errorf("error %v is not ErrSeed", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// The undamaged file loads, and a restart over the server's own files (a snapshot, or the
	// AOF whose base the seed became) does not seed again; with neither, it does.
	path := writeTemp(t, loadable)
	for _, tc := range []struct {
		name    string
		cfg     Config
		script  []string
		restart string // EXISTS a after the restart
	}{
		{"snapshot", Config{}, []string{"DEL a", "SAVE"}, ":0\r\n"},
		{"aof", Config{AppendOnly: true, AppendFsync: "always"}, []string{"DEL a"}, ":0\r\n"},
		{"no-persistence", Config{}, []string{"DEL a"}, ":1\r\n"},
	} {
		t.Run("restart-"+tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Dir, cfg.SeedRDB = t.TempDir(), path
			s := startServer(t, cfg)
			qc := dialRaw(t, s.Addr())
			for _, l := range append(tc.script, "EXISTS l") {
				qc.send(splitLine(t, l))
				b, err := qc.readReply(5 * time.Second)
				if err != nil || (l == "EXISTS l" && string(b) != ":1\r\n") {
					t.Fatalf("%s: %q %v", l, b, err)
				}
			}
			s.Close()
			qc = dialRaw(t, startServer(t, cfg).Addr())
			qc.send(splitLine(t, "EXISTS a"))
			if b, _ := qc.readReply(5 * time.Second); string(b) != tc.restart {
				t.Errorf("after a restart, EXISTS a = %q, want %q", b, tc.restart)
			}
		})
	}
}

// doLine sends one command line on c and returns its raw reply.
func doLine(t *testing.T, c *rawConn, l string) string {
	t.Helper()
	c.send(splitLine(t, l))
	b, err := c.readReply(5 * time.Second)
	if err != nil {
		t.Fatalf("%q: %v", l, err)
	}
	return string(b)
}
