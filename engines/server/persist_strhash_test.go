package server

import (
	"testing"
	"time"

	"qbench/engines/server/fsys"
)

// TestStrHashSurviveRestart: the string, hash, set and generic commands of issue 17 replay from
// the AOF to the same dataset: values, encodings, and expiry deadlines to the
// millisecond (relative expiries replay at their record's time, not at the restart's). As in
// Redis, an APPENDed string replayed from commands is raw again, one loaded from a rewritten
// base is embstr.
func TestStrHashSurviveRestart(t *testing.T) {
	for _, mode := range []string{"aof", "aof-rewrite"} {
		t.Run(mode, func(t *testing.T) {
			sim := fsys.NewSim()
			sim.MkdirAll("/d")
			s := startServer(t, Config{FS: sim, Dir: "/d", AppendOnly: true, AppendFsync: "always"})
			c := mustPDial(t, s.Addr())
			for _, cmd := range [][]string{
				{"SETNX", "a", "1"}, {"SETEX", "b", "1000", "v"}, {"PSETEX", "c", "1000000", "v"},
				{"MSETNX", "d", "1", "e", "2"}, {"APPEND", "f", "x"}, {"APPEND", "f", "y"},
				{"SETRANGE", "g", "3", "z"}, {"GETDEL", "a"}, {"SET", "h", "v"}, {"GETEX", "h", "EX", "500"},
				{"SET", "i", "v", "EX", "100"}, {"GETEX", "i", "PERSIST"}, {"DECRBY", "e", "5"},
				{"HSETNX", "hh", "f", "v"}, {"HINCRBYFLOAT", "hh", "n", "0.1"}, {"HINCRBYFLOAT", "hh", "n", "0.2"},
				{"SADD", "s1", "1", "2", "3"}, {"SADD", "s2", "2", "3", "x"}, {"SMOVE", "s1", "s3", "1"},
				{"SINTERSTORE", "si", "s1", "s2"}, {"SUNIONSTORE", "su", "s1", "s2"}, {"SDIFFSTORE", "sd", "s2", "s1"},
				{"COPY", "s2", "s4"}, {"COPY", "b", "b2", "DB", "2"}, {"EXPIRE", "s4", "700"},
				{"PEXPIRE", "su", "900000"}, {"EXPIREAT", "sd", "4102444800"}, {"PEXPIREAT", "si", "1"},
			} {
				c.mustDo(t, cmd...)
			}
			if mode == "aof-rewrite" {
				c.mustDo(t, "BGREWRITEAOF")
				s.p.waitBackground()
			}
			want := dumpAll(s)
			if len(want) < 14 {
				t.Fatalf("workload left only %d keys", len(want))
			}
			time.Sleep(20 * time.Millisecond) // a deadline replayed from the restart's clock would move
			s2 := restart(t, s)
			diffDumps(t, want, dumpAll(s2))
			c2 := mustPDial(t, s2.Addr())
			appended := "raw"
			if mode == "aof-rewrite" {
				appended = "embstr"
			}
			for _, k := range []struct{ key, enc string }{{"f", appended}, {"e", "int"}, {"hh", "listpack"}, {"s2", "hashtable"}, {"s1", "intset"}} {
				if v := c2.mustDo(t, "OBJECT", "ENCODING", k.key); v != k.enc {
					t.Errorf("OBJECT ENCODING %s = %v after restart, want %s", k.key, v, k.enc)
				}
			}
		})
	}
}
