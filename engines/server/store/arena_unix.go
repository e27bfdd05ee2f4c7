//go:build unix

package store

import "syscall"

// mapChunk maps n bytes of anonymous memory outside the Go heap. populate faults every page in
// at once (Linux's MAP_POPULATE), for memory about to be written front to back.
func mapChunk(n int, populate bool) ([]byte, error) {
	flags := syscall.MAP_ANON | syscall.MAP_PRIVATE
	if populate {
		flags |= mapPopulate
	}
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, flags)
}

func unmapChunk(b []byte) { syscall.Munmap(b) }
