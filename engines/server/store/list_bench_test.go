package store

import "testing"

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
