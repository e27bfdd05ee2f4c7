package aof

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"qbench/engines/server/fsys"
)

// bigRecord is record i with a 64 KiB argument of a byte that is never zero, so zeros written
// over data would show as a changed record.
func bigRecord(i int) Record {
	return Record{Kind: KindCommand, TimeMs: int64(i),
		Args: [][]byte{[]byte("RPUSH"), []byte("k"), bytes.Repeat([]byte{byte(i%251 + 1)}, 64<<10)}}
}

func diskSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// scanBig checks that data holds bigRecord(0..n-1) in order and returns Scan's error.
func scanBig(t *testing.T, path string, data []byte, n int) error {
	got := 0
	_, err := Scan(path, data, func(off int64, r Record) error {
		if !sameRecord(r, bigRecord(got)) {
			t.Fatalf("record %d at offset %d differs from what was appended", got, off)
		}
		got++
		return nil
	})
	if got != n {
		t.Fatalf("scanned %d records, want %d (err %v)", got, n, err)
	}
	return err
}

// TestPreallocate: on real files under always the writer keeps synced zeros ahead of the log
// (with preallocation on) across several extensions, never writes them over data, and Close
// cuts them off; with it off, or under everysec, the file is exactly its records, as Redis's is.
func TestPreallocate(t *testing.T) {
	const records = 200 // 13 MB: the writer catches up with more than one extension
	for _, tc := range []struct {
		name   string
		on     bool
		policy Policy
		zeros  bool
	}{{"always", true, Always, true}, {"always, off", false, Always, false}, {"everysec", true, EverySec, false}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			f, err := fsys.OS{}.OpenAppend(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte(Magic)); err != nil {
				t.Fatal(err)
			}
			w := NewWriter(fsys.OS{}, f, int64(len(Magic)), tc.policy, 0)
			w.SetPreallocate(tc.on)
			for i := 0; i < records; i++ {
				end := w.Append(bigRecord(i))
				if i%5 == 4 {
					if err := w.Commit(end); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			w.mu.Lock()
			w.settleLocked()
			w.mu.Unlock()
			st := w.Stats()
			size, disk := st.CurrentSize, diskSize(t, path)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			err = scanBig(t, path, data, records)
			if tc.zeros {
				var fe *FormatError
				if disk <= size || st.Preallocated <= size || !errors.As(err, &fe) || !fe.Truncated || fe.Reason != "zero-filled tail" || fe.Offset != size {
					t.Fatalf("open, preallocating: %d bytes on disk, %d logical, preallocated to %d; scan: %v", disk, size, st.Preallocated, err)
				}
			} else if disk != size || st.Preallocated != 0 || err != nil {
				t.Fatalf("open, not preallocating: %d bytes on disk, %d logical, preallocated to %d; scan: %v", disk, size, st.Preallocated, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if disk := diskSize(t, path); disk != size {
				t.Fatalf("closed: %d bytes on disk, want the %d of the records", disk, size)
			}
			data, _ = os.ReadFile(path)
			if err := scanBig(t, path, data, records); err != nil {
				t.Fatalf("closed: %v", err)
			}
		})
	}
}

// TestRotateTrims: a file the log leaves at rotation ends at its last record, so replay (which
// allows a torn tail only in the last file) reads it whole.
func TestRotateTrims(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) fsys.File {
		f, err := fsys.OS{}.OpenAppend(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(Magic)); err != nil {
			t.Fatal(err)
		}
		return f
	}
	w := NewWriter(fsys.OS{}, open("a"), int64(len(Magic)), Always, 0)
	for i := 0; i < 3; i++ {
		if err := w.Commit(w.Append(bigRecord(i))); err != nil {
			t.Fatal(err)
		}
	}
	size := w.Stats().CurrentSize
	old, err := w.Rotate(open("b"), int64(len(Magic)))
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	if disk := diskSize(t, filepath.Join(dir, "a")); disk != size {
		t.Fatalf("rotated-out file: %d bytes on disk, want the %d of its records", disk, size)
	}
	if err := w.Commit(w.Append(bigRecord(0))); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.settleLocked()
	w.mu.Unlock()
	if st := w.Stats(); st.Preallocated <= st.CurrentSize {
		t.Fatalf("the new file is not preallocated: %+v", st)
	}
	w.Close()
}

// TestScanZeroTail: zeros after the last whole record end the log (preallocated space, or
// blocks a crash left unwritten) and a frame that runs into them was torn by the crash; damage
// that zeros do not explain is still an error.
func TestScanZeroTail(t *testing.T) {
	rs := testRecords(3)
	clean := encode(rs)
	last := int64(len(encode(rs[:2])))
	zeros := make([]byte, 8192)
	with := func(b []byte, tail ...[]byte) []byte {
		out := append([]byte(nil), b...)
		for _, x := range tail {
			out = append(out, x...)
		}
		return out
	}
	flip := func(b []byte, at int) []byte {
		out := append([]byte(nil), b...)
		out[at] ^= 0x55
		return out
	}
	cases := []struct {
		name      string
		data      []byte
		truncated bool  // a torn tail (loaded with a warning) rather than damage
		at        int64 // where the valid data ends
		reason    string
	}{
		{"zeros after the last record", with(clean, zeros), true, int64(len(clean)), "zero-filled tail"},
		{"half a header, then zeros", with(clean[:last+6], zeros), true, last, "torn record followed by zeros"},
		{"a header and half a payload, then zeros", with(clean[:last+HeaderLen+4], zeros), true, last, "torn record followed by zeros"},
		{"a changed byte in the last record, zeros after", with(flip(clean, len(clean)-2), zeros), false, last, "record checksum mismatch"},
		{"a changed byte in the middle, zeros after", with(flip(clean, int(last)-2), zeros), false, int64(len(encode(rs[:1]))), "record checksum mismatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			end, err := Scan("log", tc.data, nil)
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Truncated != tc.truncated || end != tc.at || !strings.HasPrefix(fe.Reason, tc.reason) {
				t.Fatalf("Scan = %d, %v; want truncated=%v at %d (%s)", end, err, tc.truncated, tc.at, tc.reason)
			}
		})
	}
	w := Warning{File: "log", Offset: int64(len(clean)), Discarded: int64(len(zeros)), Reason: ZeroTail}
	if s := w.String(); !strings.Contains(s, "holding no record") {
		t.Fatalf("warning for a zero tail: %q", s)
	}
}

// TestPreBudget: an extension takes at most 1/preShare of the free space, in whole pieces, and
// at most preChunk; none when that is under a piece.
func TestPreBudget(t *testing.T) {
	for _, tc := range []struct{ avail, want int64 }{
		{0, 0}, {preShare*prePiece - 1, 0}, {preShare * prePiece, prePiece},
		{2 << 20, prePiece}, {6 << 20, 3 * prePiece}, {1 << 40, preChunk},
	} {
		if got := preBudget(tc.avail); got != tc.want {
			t.Errorf("preBudget(%d) = %d, want %d", tc.avail, got, tc.want)
		}
	}
}
