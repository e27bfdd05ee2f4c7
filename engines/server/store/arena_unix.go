//go:build unix

package store

import "syscall"

// mapChunk maps n bytes of anonymous memory outside the Go heap. Its pages are faulted in by
// prefault as the write position reaches them (or at once where that is unsupported).
func mapChunk(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|mapPopulate())
}

func unmapChunk(b []byte) { syscall.Munmap(b) }
