package aof

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"qbench/engines/server/fsys"
)

func testRecords(n int) []Record {
	var rs []Record
	for i := 0; i < n; i++ {
		rs = append(rs, Record{Kind: KindCommand, DB: i % 3, TimeMs: int64(1700000000000 + i),
			Args: [][]byte{[]byte("RPUSH"), []byte("k"), []byte(fmt.Sprintf("value-%d", i))}})
	}
	return rs
}

func encode(rs []Record) []byte {
	b := []byte(Magic)
	for _, r := range rs {
		b = AppendRecord(b, r)
	}
	return b
}

func sameRecord(a, b Record) bool {
	if a.Kind != b.Kind || a.DB != b.DB || a.TimeMs != b.TimeMs || len(a.Args) != len(b.Args) {
		return false
	}
	for i := range a.Args {
		if !bytes.Equal(a.Args[i], b.Args[i]) {
			return false
		}
	}
	return true
}

// writeLayout stores data as the single incremental file of a layout on a simulated FS.
func writeLayout(t testing.TB, data []byte) *Layout {
	sim := fsys.NewSim()
	l := NewLayout(sim, "/d", "")
	l.Incrs, l.IncrSeqs = []string{l.IncrName(1)}, []int{1}
	if err := l.Save(); err != nil {
		t.Fatal(err)
	}
	if err := sim.WriteFile(l.Path(l.IncrName(1)), data); err != nil {
		t.Fatal(err)
	}
	return l
}

// FuzzReplay damages a valid log (truncation, a changed byte, appended garbage) and replays it:
// replay must never panic, and whatever it loads must be exactly a prefix of the records
// written: a damaged log is either cut at a torn tail (with a warning) or refused with the
// offset of the damage, never loaded as a different dataset.
func FuzzReplay(f *testing.F) {
	f.Add(uint16(5), uint16(0), byte(0), []byte(nil))
	f.Add(uint16(20), uint16(100), byte(0x55), []byte(nil))
	f.Add(uint16(20), uint16(3), byte(0), []byte{1, 2, 3})
	f.Add(uint16(20), uint16(400), byte(1), []byte(nil))
	f.Fuzz(func(t *testing.T, n, pos uint16, flip byte, tail []byte) {
		rs := testRecords(int(n % 64))
		orig := encode(rs)
		data := bytes.Clone(orig)
		p := int(pos) % (len(data) + 1)
		switch {
		case flip == 0:
			data = data[:p] // a torn write
		case p < len(data):
			data[p] ^= flip
		}
		data = append(data, tail...)
		l := writeLayout(t, data)
		var got []Record
		_, warns, err := l.Replay(func(r Record) error {
			r.Args = append([][]byte(nil), r.Args...)
			got = append(got, r)
			return nil
		})
		if len(got) > len(rs) {
			t.Fatalf("loaded %d records from a log of %d", len(got), len(rs))
		}
		for i := range got {
			if !sameRecord(got[i], rs[i]) {
				t.Fatalf("record %d loaded as %+v, written as %+v", i, got[i], rs[i])
			}
		}
		// A cut exactly between records (or before the header: a new, empty incremental file)
		// is a clean shorter log; anything else must be reported.
		clean := len(data) == 0 || isCleanPrefix(rs, orig, data)
		if err == nil && len(warns) == 0 && len(got) != len(rs) && !clean {
			t.Fatalf("silently loaded %d of %d records", len(got), len(rs))
		}
		if fe, ok := err.(*FormatError); ok && fe.Offset > int64(len(data)) {
			t.Fatalf("damage reported past the end: %v", err)
		}
	})
}

// isCleanPrefix reports whether data is the log of the first k records, for some k.
func isCleanPrefix(rs []Record, orig, data []byte) bool {
	off := len(Magic)
	for _, r := range rs {
		if off == len(data) {
			break
		}
		off += len(AppendRecord(nil, r))
	}
	return off == len(data) && bytes.Equal(orig[:off], data)
}

// TestCheckFix: check reports the damage, fix backs up and truncates, and the fixed log replays.
func TestCheckFix(t *testing.T) {
	rs := testRecords(10)
	data := encode(rs)
	// Flip a byte inside the payload of record 6.
	off := len(Magic)
	for i := 0; i < 6; i++ {
		off += len(AppendRecord(nil, rs[i]))
	}
	data[off+HeaderLen+3] ^= 0xff
	l := writeLayout(t, data)
	reps, err := Check(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Damage == nil || reps[0].Damage.Offset != int64(off) || reps[0].Records != 6 || reps[0].Recoverable != 3 {
		t.Fatalf("check = %+v (damage %+v), want damage at %d after 6 records, 3 after it", reps, reps[0].Damage, off)
	}
	if _, _, err := l.Replay(func(Record) error { return nil }); err == nil {
		t.Fatal("replay of a corrupt log succeeded")
	}
	fr, err := Fix(l)
	if err != nil {
		t.Fatal(err)
	}
	if fr.Offset != int64(off) || fr.DiscardedRecords != 4 || len(fr.Backups) != 1 {
		t.Fatalf("fix = %+v", fr)
	}
	n, warns, err := l.Replay(func(Record) error { return nil })
	if err != nil || n != 6 || len(warns) != 0 {
		t.Fatalf("after fix: %d records, %v, %v", n, warns, err)
	}
	bak, err := l.FS.ReadFile(fr.Backups[0])
	if err != nil || !bytes.Equal(bak, data) {
		t.Fatalf("backup differs from the damaged file: %v", err)
	}
}

// TestGroupCommit: under always, concurrent committers share fsyncs, and none returns before
// an fsync covering its record.
func TestGroupCommit(t *testing.T) {
	// Real files: an fsync takes long enough here for commits to pile up behind it.
	f, err := fsys.OS{}.OpenAppend(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewWriter(fsys.OS{}, f, 0, Always, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex // the server's store lock: appends happen in execution order
	const writers, each = 16, 200
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				mu.Lock()
				end := w.Append(testRecords(1)[0])
				mu.Unlock()
				if err := w.Commit(end); err != nil {
					t.Error(err)
					return
				}
				w.mu.Lock()
				synced := w.synced
				w.mu.Unlock()
				if synced < end {
					t.Errorf("commit of %d returned with only %d fsynced", end, synced)
				}
			}
		}()
	}
	wg.Wait()
	st := w.Stats()
	if st.SyncedRecords != writers*each {
		t.Fatalf("synced %d records, want %d", st.SyncedRecords, writers*each)
	}
	t.Logf("%d records, %d fsyncs: %.1f writes per fsync", st.SyncedRecords, st.Fsyncs, float64(st.SyncedRecords)/float64(st.Fsyncs))
	if st.Fsyncs >= st.SyncedRecords {
		t.Errorf("no group commit: %d fsyncs for %d records", st.Fsyncs, st.SyncedRecords)
	}
}

// TestEverysec: writes are acknowledged after write(2) only; the tick fsyncs in the background
// and counts aof_delayed_fsync when that fsync is still running two periods later. The clock is
// injected through Tick's argument; the fsync is held with the simulated FS's hook.
func TestEverysec(t *testing.T) {
	sim := fsys.NewSim()
	sim.MkdirAll("/d")
	f, _ := sim.OpenAppend("/d/log")
	w := NewWriter(sim, f, 0, EverySec, time.Second)
	hold, release := make(chan struct{}), make(chan struct{})
	sim.SyncHook = func(string) { close(hold); <-release }
	if err := w.Commit(w.Append(testRecords(1)[0])); err != nil {
		t.Fatal(err)
	}
	if sim.Unsynced("/d/log") == 0 {
		t.Fatal("everysec fsynced before acknowledging")
	}
	t0 := time.Unix(1000, 0)
	w.Tick(t0) // starts the background fsync, which blocks in the hook
	<-hold
	w.Tick(t0.Add(time.Second))
	if d := w.Stats().DelayedFsync; d != 0 {
		t.Fatalf("delayed after 1 s: %d", d)
	}
	w.Commit(w.Append(testRecords(1)[0])) // writes go on while the fsync runs
	w.Tick(t0.Add(2 * time.Second))
	if st := w.Stats(); st.DelayedFsync != 1 || !st.BgSyncRunning {
		t.Fatalf("after 2 s of one fsync: %+v", st)
	}
	close(release)
	sim.SyncHook = nil
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if sim.Unsynced("/d/log") != 0 {
		t.Fatal("data unsynced after Sync")
	}
}
