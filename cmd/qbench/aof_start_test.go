package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"qbench/engines/server/aof"
	"qbench/engines/server/fsys"
)

// writeLog writes a manifest-less or manifested log of records under dir/appendonlydir.
func writeLog(t *testing.T, dir string, manifest bool, rs ...aof.Record) string {
	t.Helper()
	l := aof.NewLayout(fsys.OS{}, dir, "")
	l.Incrs, l.IncrSeqs = []string{l.IncrName(1)}, []int{1}
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	b := []byte(aof.Magic)
	for _, r := range rs {
		b = aof.AppendRecord(b, r)
	}
	if err := os.WriteFile(l.Path(l.IncrName(1)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !manifest {
		if err := os.Remove(l.ManifestPath()); err != nil {
			t.Fatal(err)
		}
	}
	return l.Path(l.IncrName(1))
}

func cmdRecord(args ...string) aof.Record {
	r := aof.Record{Kind: aof.KindCommand, TimeMs: 1700000000000}
	for _, a := range args {
		r.Args = append(r.Args, []byte(a))
	}
	return r
}

// TestServeStartExitCodes: start-up failures exit by the error's type, not its text. A log
// record naming an unknown command used to exit 2 (usage) because the text said "unknown
// command"; it is the data's fault, exit 1, and the message names the file and offset. A
// directory with a log but no manifest refuses (exit 1) and leaves the file as it was.
func TestServeStartExitCodes(t *testing.T) {
	cases := []struct {
		name       string
		manifest   bool
		records    []aof.Record
		args       []string
		wantCode   int
		wantStderr []string
	}{
		{"unknown command in a record", true, []aof.Record{cmdRecord("SET", "a", "1"), cmdRecord("FROBNICATE", "x")}, nil, 1,
			[]string{"appendonly.aof.1.incr.qaof: record at byte offset", "unknown command 'FROBNICATE'"}},
		{"nested transaction record", true, []aof.Record{{Kind: aof.KindMulti, Args: [][]byte{aof.AppendPayload(nil, aof.Record{Kind: aof.KindMulti, Args: [][]byte{aof.AppendPayload(nil, cmdRecord("SET", "a", "1"))}})}}}, nil, 1,
			[]string{"record at byte offset 8: transaction record holds another transaction record"}},
		{"log without a manifest", false, []aof.Record{cmdRecord("SET", "a", "1")}, nil, 1,
			[]string{"holds appendonly.aof.1.incr.qaof but no manifest", "refusing to start"}},
		{"bad appendfsync", true, nil, []string{"--appendfsync", "sometimes"}, 2, []string{`appendfsync "sometimes"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeLog(t, dir, c.manifest, c.records...)
			before, _ := os.ReadFile(path)
			args := append([]string{"serve", "--port", "0", "--dir", dir, "--appendonly", "yes"}, c.args...)
			_, stderr, code := qbench(t, args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.wantCode, stderr)
			}
			for _, w := range c.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			after, _ := os.ReadFile(path)
			if string(after) != string(before) {
				t.Errorf("%s changed from %d to %d bytes", filepath.Base(path), len(before), len(after))
			}
		})
	}
}

// TestAofCheckWithoutManifest: qbench aof check on log files without a manifest checks them,
// suggests the manifest the server's start-up error asks for, and exits 1.
func TestAofCheckWithoutManifest(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, false, cmdRecord("SET", "a", "1"), cmdRecord("SET", "b", "2"))
	stdout, stderr, code := qbench(t, "aof", "check", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, stderr)
	}
	for _, w := range []string{"appendonly.aof.1.incr.qaof: ok, 2 records", "no manifest", "file appendonly.aof.1.incr.qaof seq 1 type i"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
}
