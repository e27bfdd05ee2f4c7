package server

import (
	"fmt"
	"testing"
)

// BenchmarkLremAck is the reliable-list design's acknowledgement on the in-repo server: the
// processing list holds n messages (newest at the head), and each op pushes one more at the head
// (LPUSH, as LMOVE does) and acknowledges the oldest with LREM -1, found at the tail. allocs/op
// and B/op do not depend on the machine's load; ns/op does (read it as provisional).
func BenchmarkLremAck(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := New(Config{})
			c := &client{s: s, proto: 2, authed: true}
			m := n + 1
			vals := make([][]byte, m)
			for i := range vals {
				vals[i] = fmt.Appendf(nil, "{\"id\":%08d,\"body\":\"0123456789abcdef0123456789\"}", i)
			}
			key, lpush, lrem, minus1 := []byte("qb:proc"), []byte("LPUSH"), []byte("LREM"), []byte("-1")
			s.mu.Lock()
			defer s.mu.Unlock()
			for i := 0; i < n; i++ {
				c.execute([][]byte{lpush, key, vals[i]})
			}
			c.resetOut()
			push := [][]byte{lpush, key, nil}
			rem := [][]byte{lrem, key, minus1, nil}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				push[2] = vals[(i+n)%m]
				rem[3] = vals[i%m]
				c.execute(push)
				c.execute(rem)
				if len(c.out) < 4 || string(c.out[len(c.out)-4:]) != ":1\r\n" {
					b.Fatalf("reply %q", c.out)
				}
				c.resetOut()
				i++
			}
		})
	}
}

// BenchmarkListEdit is LSET and LINSERT (then LREM of the inserted element) in the middle of a
// list of 10,000, the other commands that used to rebuild the list.
func BenchmarkListEdit(b *testing.B) {
	for _, bc := range []struct {
		name string
		ops  [][][]byte
	}{
		{"lset", [][][]byte{{[]byte("LSET"), []byte("l"), []byte("5000"), []byte("{\"id\":00005000,\"body\":\"changed\"}")}}},
		{"linsert+lrem", [][][]byte{
			{[]byte("LINSERT"), []byte("l"), []byte("AFTER"), []byte("pivot"), []byte("inserted")},
			{[]byte("LREM"), []byte("l"), []byte("1"), []byte("inserted")},
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(Config{})
			c := &client{s: s, proto: 2, authed: true}
			s.mu.Lock()
			defer s.mu.Unlock()
			for i := 0; i < 10000; i++ {
				v := fmt.Appendf(nil, "{\"id\":%08d,\"body\":\"0123456789abcdef0123456789\"}", i)
				if i == 5000 {
					v = []byte("pivot")
				}
				c.execute([][]byte{[]byte("RPUSH"), []byte("l"), v})
			}
			c.resetOut()
			b.ReportAllocs()
			for b.Loop() {
				for _, op := range bc.ops {
					c.execute(op)
				}
				if len(c.out) == 0 || c.out[0] == '-' {
					b.Fatalf("reply %q", c.out)
				}
				c.resetOut()
			}
		})
	}
}
