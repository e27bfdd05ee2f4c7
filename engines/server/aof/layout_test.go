package aof

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"qbench/engines/server/fsys"
)

// TestOpenIncrRestartsTornHeader: a new incremental file left with part of its header by a
// failed write (a full disk) is started over, not appended to (the crash harness found a
// rewrite reusing such a file: the restart failed with "bad magic").
func TestOpenIncrRestartsTornHeader(t *testing.T) {
	l := writeLayout(t, encode(nil))
	name := l.IncrName(2)
	if err := l.FS.WriteFile(l.Path(name), []byte(Magic[:3])); err != nil {
		t.Fatal(err)
	}
	f, size, err := l.OpenIncr(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := l.FS.ReadFile(l.Path(name))
	if string(b) != Magic || size != int64(len(Magic)) {
		t.Fatalf("file = %q (size %d), want just the header", b, size)
	}
}

// TestReplayTornTailBeforeEmptyFiles: a truncated final record in the last file holding
// records is the usual torn tail even when empty incremental files follow it (a rotation that
// failed after the manifest named the new file); the load keeps the complete records.
func TestReplayTornTailBeforeEmptyFiles(t *testing.T) {
	data := encode(testRecords(5))
	l := writeLayout(t, data[:len(data)-3])
	l.Incrs, l.IncrSeqs = append(l.Incrs, l.IncrName(2)), append(l.IncrSeqs, 2)
	if err := l.FS.WriteFile(l.Path(l.IncrName(2)), []byte(Magic)); err != nil {
		t.Fatal(err)
	}
	n, warns, err := l.Replay(func(Record) error { return nil })
	if err != nil || n != 4 || len(warns) != 1 {
		t.Fatalf("replay = %d records, %v, %v; want 4, one warning, nil", n, warns, err)
	}
	// A torn record with records after it is still refused.
	l2 := writeLayout(t, data[:len(data)-3])
	l2.FS.WriteFile(l2.Path(l2.IncrName(2)), encode(testRecords(1)))
	l2.Incrs, l2.IncrSeqs = append(l2.Incrs, l2.IncrName(2)), append(l2.IncrSeqs, 2)
	if _, _, err := l2.Replay(func(Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("a torn record before records: err = %v, want it refused", err)
	}
}

// TestCreateIncrAfterDroppedHeader: the header's fsync fails (Linux drops the page, the next
// fsync returns 0). A second attempt must write the header again: reusing the file as it is
// left a log whose first bytes were zeros after a power cut ("bad magic"; found by the fault
// harness).
func TestCreateIncrAfterDroppedHeader(t *testing.T) {
	l := writeLayout(t, encode(nil))
	sim := l.FS.(*fsys.Sim)
	name := l.IncrName(2)
	sim.FailSyncOnce(syscall.EIO)
	if _, _, err := l.CreateIncr(name); err == nil {
		t.Fatal("CreateIncr succeeded although its fsync failed")
	}
	f, _, err := l.CreateIncr(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(encode(testRecords(1))[len(Magic):])
	f.Sync()
	sim.PowerLoss(false, nil)
	if b, _ := sim.ReadFile(l.Path(name)); !strings.HasPrefix(string(b), Magic) {
		t.Fatalf("after the power cut the file starts %q, want the header", b[:min(len(b), 8)])
	}
}

// TestReplayMissingFileNamed: the manifest lists a file that is gone after one that ends in
// preallocated zeros. The error names the missing file (it used to blame the zeros of the
// other: "truncated record at byte offset ...: zero-filled tail"), and nothing loads.
func TestReplayMissingFileNamed(t *testing.T) {
	data := append(encode(testRecords(5)), make([]byte, 4096)...)
	l := writeLayout(t, data)
	l.Incrs, l.IncrSeqs = append(l.Incrs, l.IncrName(2)), append(l.IncrSeqs, 2)
	n, _, err := l.Replay(func(Record) error { return nil })
	var mf *MissingFileError
	if !errors.As(err, &mf) || mf.File != l.IncrName(2) || n != 0 {
		t.Fatalf("Replay = %d records, %v; want a MissingFileError for %s", n, err, l.IncrName(2))
	}
	if !strings.Contains(err.Error(), "Unable to obtain the AOF file "+l.IncrName(2)+" length") {
		t.Fatalf("error %q", err)
	}
}

// TestOrphans: the files named as a layout names them, found without a manifest.
func TestOrphans(t *testing.T) {
	sim := fsys.NewSim()
	l := NewLayout(sim, "/d", "")
	for _, n := range []string{"appendonly.aof.1.base.qaof", "appendonly.aof.2.incr.qaof", "appendonly.aof.x.incr.qaof", "other.1.incr.qaof", "appendonly.aof.manifest.tmp"} {
		if err := sim.MkdirAll(l.Dir); err != nil {
			t.Fatal(err)
		}
		if err := sim.WriteFile(l.Path(n), []byte(Magic)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Orphans()
	if err != nil || strings.Join(got, " ") != "appendonly.aof.1.base.qaof appendonly.aof.2.incr.qaof" {
		t.Fatalf("Orphans = %v, %v", got, err)
	}
	if got, err := NewLayout(sim, "/none", "").Orphans(); err != nil || got != nil {
		t.Fatalf("no directory: Orphans = %v, %v", got, err)
	}
}

// TestFromOrphans: without a manifest, the suggested layout is the base of the highest
// sequence and the incremental files from its sequence on, in order (older ones are history).
func TestFromOrphans(t *testing.T) {
	l := NewLayout(fsys.NewSim(), "/d", "")
	l.FromOrphans([]string{"appendonly.aof.10.incr.qaof", "appendonly.aof.1.base.qaof", "appendonly.aof.1.incr.qaof",
		"appendonly.aof.2.incr.qaof", "appendonly.aof.2.base.qaof", "appendonly.aof.3.incr.qaof"})
	want := "file appendonly.aof.2.base.qaof seq 2 type b\nfile appendonly.aof.2.incr.qaof seq 2 type i\nfile appendonly.aof.3.incr.qaof seq 3 type i\nfile appendonly.aof.10.incr.qaof seq 10 type i\n"
	if got := string(l.Manifest()); got != want {
		t.Fatalf("manifest:\n%s\nwant:\n%s", got, want)
	}
}
