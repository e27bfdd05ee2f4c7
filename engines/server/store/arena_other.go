//go:build !unix

package store

func mapChunk(n int, _ bool) ([]byte, error) { return make([]byte, n), nil }

func unmapChunk(b []byte) {}
