package lossyfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkAppend is the cost of one small append (and of an append plus fdatasync) on the backing
// file system directly and through lossyfs: what a server pays per write for running on it.
//
//	go test -run '^$' -bench Append -benchtime 20000x ./engines/lossyfs
func BenchmarkAppend(b *testing.B) {
	record := make([]byte, 100)
	for _, fsync := range []bool{false, true} {
		for _, target := range []string{"backing", "lossyfs", "lossyfs-no-backing-sync"} {
			name := target + "/write"
			if fsync {
				name += "+fdatasync"
			}
			b.Run(name, func(b *testing.B) {
				dir := b.TempDir()
				if target != "backing" {
					_, _, mnt := mountT(b, Options{NoBackingSync: target == "lossyfs-no-backing-sync"})
					dir = mnt
				}
				fd, err := os.OpenFile(filepath.Join(dir, "aof"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				defer fd.Close()
				b.SetBytes(int64(len(record)))
				for b.Loop() {
					if _, err := fd.Write(record); err != nil {
						b.Fatal(err)
					}
					if fsync {
						if err := unix.Fdatasync(int(fd.Fd())); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
