package server

import (
	"errors"
	"fmt"
	"testing"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
)

// TestNoManifestKeepsTheLog: the manifest of a log of 200 writes is deleted. The server used to
// start empty and truncate the incremental file to its header (6,700 B to 8). It must refuse,
// naming the file, and leave it byte for byte; so must CONFIG SET appendonly yes on a server
// started without the AOF. With the manifest restored, everything loads.
func TestNoManifestKeepsTheLog(t *testing.T) {
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	cfg := Config{AppendOnly: true, AppendFsync: "always", FS: sim, Dir: "/d"}
	s := startServer(t, cfg)
	c := mustPDial(t, s.Addr())
	for i := 0; i < 200; i++ {
		c.mustDo(t, "RPUSH", "l", fmt.Sprint(i))
	}
	s.Close()
	l := aof.NewLayout(sim, "/d", "")
	manifest, err := sim.ReadFile(l.ManifestPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Remove(l.ManifestPath()); err != nil {
		t.Fatal(err)
	}
	incr := l.Path(l.IncrName(1))
	before, err := sim.ReadFile(incr)
	if err != nil || len(before) < 1000 {
		t.Fatalf("%s: %d bytes, %v", incr, len(before), err)
	}
	t.Run("start", func(t *testing.T) {
		err := New(cfg).Start()
		var nm *aof.NoManifestError
		if !errors.As(err, &nm) || len(nm.Files) != 1 || nm.Files[0] != l.IncrName(1) {
			t.Fatalf("Start: %v; want a NoManifestError naming %s", err, l.IncrName(1))
		}
	})
	t.Run("CONFIG SET appendonly yes", func(t *testing.T) {
		off := cfg
		off.AppendOnly = false
		s := startServer(t, off)
		c := mustPDial(t, s.Addr())
		v, err := c.do("CONFIG", "SET", "appendonly", "yes")
		if _, ok := v.(replyErr); !ok || err != nil {
			t.Fatalf("CONFIG SET appendonly yes over a log without a manifest = %v, %v; want an error", v, err)
		}
	})
	after, _ := sim.ReadFile(incr)
	if string(after) != string(before) {
		t.Fatalf("%s went from %d to %d bytes", incr, len(before), len(after))
	}
	if err := sim.WriteFile(l.ManifestPath(), manifest); err != nil {
		t.Fatal(err)
	}
	s2 := startServer(t, cfg)
	if n := mustPDial(t, s2.Addr()).mustDo(t, "LLEN", "l"); n != int64(200) {
		t.Fatalf("LLEN l = %v after restoring the manifest, want 200", n)
	}
}

// TestZmpopReplays: ZMPOP and a served BZMPOP are logged as Redis propagates them (ZPOPMIN or
// ZPOPMAX key count), so a restart from the log gives the same dataset.
func TestZmpopReplays(t *testing.T) {
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	cfg := Config{AppendOnly: true, AppendFsync: "always", FS: sim, Dir: "/d"}
	s := startServer(t, cfg)
	c := mustPDial(t, s.Addr())
	c.mustDo(t, "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
	c.mustDo(t, "ZMPOP", "1", "z", "MIN", "COUNT", "2")
	c.mustDo(t, "ZMPOP", "2", "none", "z", "MAX")
	b := mustPDial(t, s.Addr())
	b.send("BZMPOP", "0", "1", "q", "MAX", "COUNT", "2")
	b.bw.Flush()
	waitFor(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.blocked.count() == 1
	})
	c.mustDo(t, "ZADD", "q", "1", "x", "2", "y", "3", "z")
	if _, err := b.read(); err != nil {
		t.Fatal(err)
	}
	want := dumpAll(s)
	s.Close()
	s2 := startServer(t, cfg)
	diffDumps(t, want, dumpAll(s2))
}
