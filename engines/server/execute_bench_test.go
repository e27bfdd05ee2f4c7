package server

import (
	"strings"
	"testing"
)

// BenchmarkExecute times one command through the dispatcher (table lookup, arity and flag
// checks, handler, reply encoding), with no socket: what a request costs the server beside its
// read and write system calls. Unpipelined XADD at 50 clients spends ~12 us of server CPU per
// request on this 2-vCPU VM, of which this is ~1 us (engines/server/README.md, Benchmarks).
// ns/op is wall time: on a loaded machine read the CPU instead (-cpuprofile's "Total samples"
// over b.N); allocs/op does not depend on the load.
func BenchmarkExecute(b *testing.B) {
	value := []byte(strings.Repeat("v", 256))
	for _, bc := range []struct {
		name string
		args [][]byte
	}{
		{"xadd", [][]byte{[]byte("XADD"), []byte("qb:s"), []byte("*"), []byte("payload"), value}},
		{"lpush", [][]byte{[]byte("LPUSH"), []byte("mylist"), value}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(Config{})
			c := &client{s: s, proto: 2, authed: true}
			s.mu.Lock()
			defer s.mu.Unlock()
			b.ReportAllocs()
			for b.Loop() {
				c.execute(bc.args)
				if len(c.out) == 0 || c.out[0] == '-' {
					b.Fatalf("%s: reply %q", bc.name, c.out)
				}
				c.resetOut()
			}
		})
	}
}
