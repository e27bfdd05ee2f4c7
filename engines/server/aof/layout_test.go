package aof

import (
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
