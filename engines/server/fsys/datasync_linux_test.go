package fsys

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAppendsUseFdatasync: the log's appends sync with fdatasync (osFile), new files with fsync
// (*os.File), as the comments promise. Before, OpenAppend returned *os.File: fsync everywhere.
func TestAppendsUseFdatasync(t *testing.T) {
	dir := t.TempDir()
	a, err := OS{}.OpenAppend(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, ok := a.(osFile); !ok {
		t.Fatalf("OpenAppend returned %T, want osFile (fdatasync)", a)
	}
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	c, err := OS{}.Create(filepath.Join(dir, "new"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*os.File); !ok {
		t.Fatalf("Create returned %T, want *os.File (fsync)", c)
	}
}

// TestSyncInline: the log's files offer the inline fdatasync, and it reports errors as Sync does
// (a pipe cannot be synced: EINVAL, not success).
func TestSyncInline(t *testing.T) {
	a, err := OS{}.OpenAppend(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	is, ok := a.(InlineSyncer)
	if !ok {
		t.Fatalf("%T is not an InlineSyncer", a)
	}
	if _, err := a.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := is.SyncInline(); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, inline := range []bool{false, true} {
		if err := (osFile{w}).datasync(inline); err == nil {
			t.Fatalf("inline=%v: fdatasync of a pipe succeeded", inline)
		}
	}
}
