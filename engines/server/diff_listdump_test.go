package server

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// listDumpElem is element i of a list of elements of about size bytes: for 10-byte elements
// every third is an integer (listpack integer entries of several widths), the others strings.
func listDumpElem(size, i int) string {
	if size <= 10 && i%3 == 0 {
		return fmt.Sprint(i*i*37 - 500)
	}
	s := fmt.Sprintf("e%d-", i)
	return s + strings.Repeat("abcdefghij", size/10+1)[:size-len(s)]
}

// listDumpCap is about how many elements of size bytes one node of fill holds.
func listDumpCap(fill, size int) int {
	limit, most := 8192, 1<<30
	if fill < 0 {
		limit = []int{4096, 8192, 16384, 32768, 65536}[-fill-1]
	} else {
		most = max(fill, 1)
	}
	return max(1, min(most, limit/(size+3)))
}

// TestDiffRedisListDump: for the histories a queue makes, elements of 10 B (with integers),
// 300 B, ~8 KB and >8 KB, counts making one, two and three quicklist nodes, and
// list-max-listpack-size -1..-5, 0 and 4 (set through both names), each server RESTOREs the
// other's payload to the same LRANGE, and a list RESTOREd from Redis's payload DUMPs here to
// that same payload (Redis keeps the nodes it loads), COPY of it too. DUMP is byte-identical to
// redis-server's for the histories whose nodes follow from the elements (store/list_nodes.go):
// RPUSH or LPUSH only, and with pops at the pushed end (RPOP, LPOP with counts). The others
// (pushes then pops at the other end with LPOP/RPOP, LMOVE and BLMOVE; LSET, LREM and LTRIM;
// pushes and pops on a restored list) are only checked to RESTORE alike, and to DUMP alike when
// Redis has one node (but after LSET, which may grow a node past the limit in place).
// This test: the default fill -2 with every history; TestDiffRedisListDumpFills and
// TestDiffRedisListDumpBigNodes the other fills (split so each stays under a second).
func TestDiffRedisListDump(t *testing.T) {
	runListDump(t, []listDumpFill{{-2, false, listDumpAll}})
}

// TestDiffRedisListDumpFills is TestDiffRedisListDump for a count, 4, with every history, and
// fills 0, -1 and -3 with RPUSH only, LPUSH with LPOP and a queue's history;
// TestDiffRedisListDumpBigNodes for -4 and -5 with the first two.
func TestDiffRedisListDumpFills(t *testing.T) {
	runListDump(t, []listDumpFill{{4, true, listDumpAll}, {0, false, listDumpSome}, {-1, true, listDumpSome}, {-3, false, listDumpSome}})
}

func TestDiffRedisListDumpBigNodes(t *testing.T) {
	one := []string{"rpush", "lpush-lpop"}
	runListDump(t, []listDumpFill{{-4, true, one}, {-5, false, one}})
}

var listDumpSome = []string{"rpush", "lpush-lpop", "rpush-lpop-lpush"}

// listDumpFill is a list-max-listpack-size (set by its alias with alias) and the histories run.
type listDumpFill struct {
	fill  int
	alias bool
	hist  []string
}

var listDumpAll = []string{"rpush", "lpush", "rpush-rpop", "lpush-lpop", "rpush-lpop-lpush", "lpush-rpop-rpush-lmove", "lset-lrem-ltrim"}

func runListDump(t *testing.T, fills []listDumpFill) {
	rc := dialRaw(t, startOwnRealRedis(t))
	s := startServer(t, Config{})
	qc := dialRaw(t, s.Addr())
	both := []*rawConn{rc, qc}
	cmd := func(c *rawConn, args ...string) []byte {
		bs := make([][]byte, len(args))
		for i, a := range args {
			bs[i] = []byte(a)
		}
		return diffDo(t, c, bs...)
	}
	exact := map[string]bool{"rpush": true, "lpush": true, "rpush-rpop": true, "lpush-lpop": true}
	histories := map[string]func(n, size int) [][]string{
		"rpush-rpop": func(n, size int) [][]string {
			return [][]string{pushCmd("RPUSH", n, size, 0), {"RPOP", "k", fmt.Sprint(n/2 + 1)},
				pushCmd("RPUSH", n/3+1, size, n), {"RPOP", "k"}}
		},
		"lpush-lpop": func(n, size int) [][]string {
			return [][]string{pushCmd("LPUSH", n, size, 0), {"LPOP", "k", fmt.Sprint(n/2 + 1)},
				pushCmd("LPUSH", n/3+1, size, n), {"LPOP", "k"}}
		},
		"rpush": func(n, size int) [][]string { return [][]string{pushCmd("RPUSH", n, size, 0)} },
		"lpush": func(n, size int) [][]string { return [][]string{pushCmd("LPUSH", n, size, 0)} },
		"rpush-lpop-lpush": func(n, size int) [][]string {
			return [][]string{pushCmd("RPUSH", n, size, 0), {"LPOP", "k", fmt.Sprint(n/2 + 1)},
				pushCmd("LPUSH", n/3+1, size, n), {"RPOP", "k"}, pushCmd("RPUSH", 2, size, 2*n)}
		},
		"lpush-rpop-rpush-lmove": func(n, size int) [][]string {
			return [][]string{pushCmd("LPUSH", n, size, 0), {"RPOP", "k", fmt.Sprint(n/2 + 1)},
				pushCmd("RPUSH", n/3+1, size, n), {"LMOVE", "k", "k", "LEFT", "RIGHT"},
				{"BLMOVE", "k", "k", "RIGHT", "LEFT", "0"}, {"LMOVE", "k", "d", "RIGHT", "LEFT"}, {"LPOP", "k"}}
		},
		"lset-lrem-ltrim": func(n, size int) [][]string {
			h := [][]string{pushCmd("RPUSH", n, size, 0), {"LSET", "k", "0", "7"},
				{"LSET", "k", "-1", listDumpElem(size+40, 3*n)}, {"LREM", "k", "1", listDumpElem(size, n/2)},
				{"LREM", "k", "-1", listDumpElem(size, n-2)}, {"LREM", "k", "0", listDumpElem(size, n/3)}}
			if n >= 4 {
				h = append(h, []string{"LTRIM", "k", "1", "-2"}, []string{"LSET", "k", fmt.Sprint(n / 2), "x"})
			}
			return h
		},
	}
	cases := 0
	for _, fc := range fills {
		name := "list-max-listpack-size"
		if fc.alias {
			name = "list-max-ziplist-size"
		}
		for _, c := range both {
			if got := string(cmd(c, "CONFIG", "SET", name, fmt.Sprint(fc.fill))); got != "+OK\r\n" {
				t.Fatalf("CONFIG SET %s %d: %q", name, fc.fill, got)
			}
		}
		for _, size := range []int{10, 300, 8000, 9000} {
			per := listDumpCap(fc.fill, size)
			for _, n := range []int{1, per + 1, 2*per + 2} {
				for _, hname := range fc.hist {
					label := fmt.Sprintf("fill %d, %d B x %d, %s", fc.fill, size, n, hname)
					for _, c := range both {
						cmd(c, "DEL", "k", "d", "r", "q")
						for _, h := range histories[hname](n, size) {
							cmd(c, h...)
						}
					}
					cases++
					if !listDumpSame(t, label, rc, qc, cmd, exact[hname] || hname != "lset-lrem-ltrim" && listDumpOneNode(cmd(rc, "DUMP", "k")), hname == "rpush") {
						return
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// listDumpOneNode: the DUMP reply is a quicklist of one node (which any history without LSET
// gives the same here: every push Redis let into the node, the rule lets in too).
func listDumpOneNode(reply []byte) bool {
	i := bytes.Index(reply, []byte("\r\n"))
	return i > 0 && len(reply) > i+4 && reply[i+2] == 18 && reply[i+3] == 1
}

// pushCmd is cmd k with n elements of size bytes numbered from first.
func pushCmd(cmd string, n, size, first int) []string {
	out := []string{cmd, "k"}
	for i := 0; i < n; i++ {
		out = append(out, listDumpElem(size, first+i))
	}
	return out
}

// listDumpSame compares key k on both servers: with exact DUMP bytes; each RESTOREd on the
// other (same LRANGE; Redis's payload RESTOREd here DUMPs back to itself, and so does its COPY);
// and with more, pushes and pops on the restored lists (same LRANGE). It reports false after a
// failure.
func listDumpSame(t *testing.T, label string, rc, qc *rawConn, cmd func(*rawConn, ...string) []byte, exact, more bool) bool {
	t.Helper()
	theirs, ours := cmd(rc, "DUMP", "k"), cmd(qc, "DUMP", "k")
	if exact && !bytes.Equal(theirs, ours) {
		t.Errorf("%s: DUMP differs\nredis  %.400x\nqbench %.400x", label, theirs, ours)
		return false
	}
	if string(theirs) == "$-1\r\n" || string(ours) == "$-1\r\n" {
		if string(theirs) != string(ours) {
			t.Errorf("%s: DUMP %q here, %.40q in Redis", label, ours, theirs)
		}
		return true
	}
	want := cmd(rc, "LRANGE", "k", "0", "-1")
	for _, pair := range [][2]*rawConn{{rc, qc}, {qc, rc}} {
		if got := string(cmd(pair[1], "RESTORE", "r", "0", string(bulkBody(t, cmd(pair[0], "DUMP", "k"))))); got != "+OK\r\n" {
			t.Errorf("%s: RESTORE: %q", label, got)
			return false
		}
		if got := cmd(pair[1], "LRANGE", "r", "0", "-1"); !bytes.Equal(got, want) {
			t.Errorf("%s: LRANGE after RESTORE differs", label)
			return false
		}
	}
	cmd(qc, "DEL", "r")
	if got := string(cmd(qc, "RESTORE", "r", "0", string(bulkBody(t, theirs)))); got != "+OK\r\n" {
		t.Errorf("%s: RESTORE: %q", label, got)
		return false
	}
	cmd(qc, "COPY", "r", "q")
	for _, key := range []string{"r", "q"} {
		if got := cmd(qc, "DUMP", key); !bytes.Equal(got, theirs) {
			t.Errorf("%s: DUMP of Redis's payload RESTOREd here (%s) differs\nredis  %.400x\nqbench %.400x", label, key, theirs, got)
			return false
		}
	}
	cmd(qc, "DEL", "q")
	if enc := string(cmd(qc, "OBJECT", "ENCODING", "r")); enc != "$9\r\nquicklist\r\n" {
		t.Errorf("%s: OBJECT ENCODING %q", label, enc)
	}
	if !more {
		return true
	}
	for _, c := range []*rawConn{rc, qc} {
		cmd(c, "RPUSH", "r", "a", "12", "bb")
		cmd(c, "LPOP", "r")
		cmd(c, "LPUSH", "r", "c")
	}
	want = cmd(rc, "LRANGE", "r", "0", "-1")
	for _, pair := range [][2]*rawConn{{rc, qc}, {qc, rc}} {
		if got := string(cmd(pair[1], "RESTORE", "q", "0", string(bulkBody(t, cmd(pair[0], "DUMP", "r"))), "REPLACE")); got != "+OK\r\n" {
			t.Errorf("%s: RESTORE after pushes and pops: %q", label, got)
			return false
		}
		if got := cmd(pair[1], "LRANGE", "q", "0", "-1"); !bytes.Equal(got, want) {
			t.Errorf("%s: LRANGE after pushes and pops on a restored list and RESTORE differs", label)
			return false
		}
	}
	return true
}

// TestDiffRedisListDumpInsert: after LINSERT (whose node splits and merges are not modelled)
// DUMP may cut its listpacks elsewhere than Redis, but each server RESTOREs the other's payload
// to the same list.
func TestDiffRedisListDumpInsert(t *testing.T) {
	rc := dialRaw(t, startOwnRealRedis(t))
	s := startServer(t, Config{})
	qc := dialRaw(t, s.Addr())
	cmd := func(c *rawConn, args ...string) []byte {
		bs := make([][]byte, len(args))
		for i, a := range args {
			bs[i] = []byte(a)
		}
		return diffDo(t, c, bs...)
	}
	for _, size := range []int{10, 300, 9000} {
		n := 3*listDumpCap(-2, size) + 2
		for _, c := range []*rawConn{rc, qc} {
			cmd(c, "DEL", "k", "r")
			cmd(c, pushCmd("RPUSH", n, size, 0)...)
			cmd(c, "LINSERT", "k", "BEFORE", listDumpElem(size, n/2), listDumpElem(size, 5*n))
			cmd(c, "LINSERT", "k", "AFTER", listDumpElem(size, 1), "9")
		}
		want := cmd(rc, "LRANGE", "k", "0", "-1")
		for _, pair := range [][2]*rawConn{{rc, qc}, {qc, rc}} {
			if got := string(cmd(pair[1], "RESTORE", "r", "0", string(bulkBody(t, cmd(pair[0], "DUMP", "k"))))); got != "+OK\r\n" {
				t.Fatalf("%d B: RESTORE: %q", size, got)
			}
			if got := cmd(pair[1], "LRANGE", "r", "0", "-1"); !bytes.Equal(got, want) {
				t.Fatalf("%d B: LRANGE after LINSERT and RESTORE differs", size)
			}
		}
	}
}
