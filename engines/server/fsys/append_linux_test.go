package fsys

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestAppendFileOffsets: the log's file writes where the data ends, not past zeros Preallocate
// wrote beyond it (no O_APPEND), and after Truncate at the new end.
func TestAppendFileOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := OS{}.OpenAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		if _, err := f.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write("abc")
	if err := f.(Preallocator).Preallocate(3, 1<<20); err != nil {
		t.Fatal(err)
	}
	write("def")
	if err := f.Truncate(5); err != nil {
		t.Fatal(err)
	}
	write("X")
	got, _ := os.ReadFile(path)
	if want := "abcdeX"; string(got) != want {
		t.Fatalf("file = %q (%d bytes), want %q", got[:min(len(got), 16)], len(got), want)
	}
	// Reopened, it appends at its end.
	f.Close()
	if f, err = (OS{}).OpenAppend(path); err != nil {
		t.Fatal(err)
	}
	write("!")
	if got, _ = os.ReadFile(path); !bytes.Equal(got, []byte("abcdeX!")) {
		t.Fatalf("after reopening: %q", got)
	}
}

// BenchmarkDatasync is the disk fact behind the log's preallocation (aof/writer_prealloc.go):
// one write of each size then fdatasync, appended (growing the file: the size goes to the
// journal each time) or into zeros written and synced beforehand. ns/op is the time per sync.
// go test ./engines/server/fsys -run '^$' -bench Datasync -benchtime 2000x -count 3
func BenchmarkDatasync(b *testing.B) {
	for _, size := range []int{300, 9000} {
		for _, pre := range []bool{false, true} {
			name := fmt.Sprintf("%dB/%s", size, map[bool]string{false: "append", true: "prewritten"}[pre])
			b.Run(name, func(b *testing.B) {
				f, err := OS{}.OpenAppend(filepath.Join(b.TempDir(), "log"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				if pre {
					if err := f.(Preallocator).Preallocate(0, int64(b.N*size)); err != nil {
						b.Fatal(err)
					}
				}
				rec := bytes.Repeat([]byte{'x'}, size)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := f.Write(rec); err != nil {
						b.Fatal(err)
					}
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
