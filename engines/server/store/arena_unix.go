//go:build unix

package store

import "syscall"

func mapChunk(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapChunk(b []byte) { syscall.Munmap(b) }
