package server

import (
	"strings"
	"testing"
)

// BenchmarkExecuteQueue is a queue's steady state through the dispatcher, no socket: RPUSH of
// one element then LPOP, on a list of 1,000, for 256-byte values and integers (the elements
// whose listpack size the quicklist node accounting parses, store/list_nodes.go). ns/op is wall
// time (provisional on a loaded machine; engines/server/bench/list-nodes-ab.sh alternates two
// revisions); allocs/op does not depend on the load.
func BenchmarkExecuteQueue(b *testing.B) {
	for _, bc := range []struct {
		name string
		val  []byte
	}{
		{"256B", []byte(strings.Repeat("v", 256))},
		{"int", []byte("1048576")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(Config{})
			c := &client{s: s, proto: 2, authed: true}
			key := []byte("q")
			push := [][]byte{[]byte("RPUSH"), key, bc.val}
			pop := [][]byte{[]byte("LPOP"), key}
			s.mu.Lock()
			defer s.mu.Unlock()
			for i := 0; i < 1000; i++ {
				c.execute(push)
			}
			c.resetOut()
			b.ReportAllocs()
			for b.Loop() {
				c.execute(push)
				c.execute(pop)
				if len(c.out) == 0 || c.out[0] == '-' {
					b.Fatalf("reply %q", c.out)
				}
				c.resetOut()
			}
		})
	}
}
