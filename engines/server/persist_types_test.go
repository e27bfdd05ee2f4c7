package server

import (
	"strings"
	"testing"

	"qbench/engines/server/fsys"
)

// typesWorkload writes every new type and command the AOF and snapshots must carry: sets in
// both encodings, hashes in both encodings (listpack order kept), SPOP's random choice,
// INCRBYFLOAT, MSET/GETSET, RENAME/MOVE/SWAPDB with expiries.
func typesWorkload(t *testing.T, s *Server) {
	c := mustPDial(t, s.Addr())
	cmds := [][]string{
		{"SADD", "ints", "3", "1", "2"}, {"SADD", "strs", "a", "b", "c", "d"}, {"SREM", "strs", "b"},
		{"SPOP", "strs"}, {"SPOP", "ints", "2"}, {"SADD", "gone", "x"}, {"SPOP", "gone"},
		{"HSET", "h", "z", "1", "a", "2", "m", "3"}, {"HDEL", "h", "a"}, {"HINCRBY", "h", "n", "7"},
		{"HSET", "big", "a", "1", "b", strings.Repeat("v", 65)},
		{"INCRBYFLOAT", "f", "0.1"}, {"INCRBYFLOAT", "f", "0.2"}, {"MSET", "m1", "1", "m2", "2"},
		{"GETSET", "m1", "one"}, {"SET", "ttl", "v", "EX", "1000"}, {"RENAME", "ttl", "ttl2"},
		{"MOVE", "m2", "3"}, {"SELECT", "4"}, {"SADD", "s4", "1"}, {"SWAPDB", "4", "5"}, {"SELECT", "0"},
		{"MULTI"}, {"SPOP", "strs"}, {"HSET", "h", "q", "9"}, {"EXEC"},
	}
	for _, cmd := range cmds {
		c.mustDo(t, cmd...)
	}
}

// restartEachWay runs workload on a server with a simulated disk, persists its dataset each way
// (the AOF under appendfsync always, a SAVE snapshot, a rewritten AOF), checks with keysOK how
// many keys the workload left, restarts, and checks that the same dataset came back; then check
// looks at the restarted server through c2.
func restartEachWay(t *testing.T, workload func(*testing.T, *Server), keysOK func(n int) bool, check func(t *testing.T, c2 *pconn)) {
	for _, mode := range []string{"aof", "snapshot", "aof-rewrite"} {
		t.Run(mode, func(t *testing.T) {
			sim := fsys.NewSim()
			sim.MkdirAll("/d")
			s := startServer(t, Config{FS: sim, Dir: "/d", AppendOnly: mode != "snapshot", AppendFsync: "always"})
			workload(t, s)
			c := mustPDial(t, s.Addr())
			switch mode {
			case "snapshot":
				c.mustDo(t, "SAVE")
			case "aof-rewrite":
				c.mustDo(t, "BGREWRITEAOF")
				s.p.waitBackground()
			}
			want := dumpAll(s)
			if !keysOK(len(want)) {
				t.Fatalf("workload left %d keys", len(want))
			}
			s2 := restart(t, s)
			diffDumps(t, want, dumpAll(s2))
			check(t, mustPDial(t, s2.Addr()))
		})
	}
}

// TestTypesSurviveRestart: after the workload, a restart from the AOF (appendfsync always), and
// from a snapshot, rebuilds exactly the same dataset, encodings included.
func TestTypesSurviveRestart(t *testing.T) {
	restartEachWay(t, typesWorkload, func(n int) bool { return n >= 9 }, func(t *testing.T, c2 *pconn) {
		if v := c2.mustDo(t, "OBJECT", "ENCODING", "big"); v != "hashtable" {
			t.Errorf("OBJECT ENCODING big = %v after restart, want hashtable", v)
		}
		if v := c2.mustDo(t, "OBJECT", "ENCODING", "h"); v != "listpack" {
			t.Errorf("OBJECT ENCODING h = %v after restart, want listpack", v)
		}
	})
}

// TestDebugReloadKeepsDigest: DEBUG RELOAD (every value through the dump encoding) leaves
// DEBUG DIGEST unchanged, and a change to any key changes it.
func TestDebugReloadKeepsDigest(t *testing.T) {
	s := startServer(t, Config{EnableDebugCommand: "yes"}) // as the redis-server it is compared with
	typesWorkload(t, s)
	c := mustPDial(t, s.Addr())
	c.mustDo(t, "RPUSH", "l", "a", "b")
	c.mustDo(t, "XADD", "st", "1-1", "f", "v")
	before := c.mustDo(t, "DEBUG", "DIGEST")
	c.mustDo(t, "DEBUG", "RELOAD")
	if after := c.mustDo(t, "DEBUG", "DIGEST"); after != before {
		t.Fatalf("digest %v after DEBUG RELOAD, %v before", after, before)
	}
	c.mustDo(t, "HSET", "h", "z", "changed")
	if after := c.mustDo(t, "DEBUG", "DIGEST"); after == before {
		t.Fatal("digest unchanged after HSET")
	}
}
