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
