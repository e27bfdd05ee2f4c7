package store

import (
	"fmt"
	"testing"
)

func BenchmarkListPushLeftPopRight(b *testing.B) {
	var l List
	v := make([]byte, 256)
	for i := 0; i < 1000; i++ {
		l.PushLeft(v)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.PushLeft(v)
		l.PopRight()
	}
}

// BenchmarkListQueue is a queue's steady state on a list of 1,000 elements: RPUSH one, LPOP one
// into a reused reply buffer, for integers and 10-byte strings (the elements whose listpack size
// the node accounting parses, list_nodes.go) and 256-byte values. ns/op is wall time (read it as
// provisional on a loaded machine); allocs/op does not depend on the load.
func BenchmarkListQueue(b *testing.B) {
	for _, bc := range []struct {
		name string
		vals [][]byte
	}{
		{"int", [][]byte{[]byte("12345"), []byte("-7"), []byte("1048576")}},
		{"10B", [][]byte{[]byte("job-000001"), []byte("job-000002"), []byte("job-000003")}},
		{"256B", [][]byte{make([]byte, 256), make([]byte, 256), make([]byte, 256)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var l List
			for i := 0; i < 1000; i++ {
				l.PushRight(bc.vals[i%3])
			}
			out := make([]byte, 0, 512)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l.PushRight(bc.vals[i%3])
				var ok bool
				if out, ok = l.AppendPopLeft(out[:0]); !ok {
					b.Fatal(fmt.Sprint("empty at ", i))
				}
				i++
			}
		})
	}
}
