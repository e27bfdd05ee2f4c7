// Package splice joins two TCP connections, copying each way, through a gate a fault can hold:
// the user-space links behind the partition faults of the Redis Cluster engine
// (engines/rediscluster's Links) and the Sentinel engine (engines/sentinelq's proxy).
package splice

import (
	"net"
	"sync"
)

// Pair is two connections joined by Run.
type Pair struct {
	A, B net.Conn
	gone chan struct{}
	once sync.Once
}

// NewPair joins a and b.
func NewPair(a, b net.Conn) *Pair { return &Pair{A: a, B: b, gone: make(chan struct{})} }

// Gone is closed once the pair is.
func (p *Pair) Gone() <-chan struct{} { return p.gone }

// Close closes both ends, which a peer sees as a failed connection, and wakes a copy waiting at
// its gate.
func (p *Pair) Close() {
	p.once.Do(func() {
		p.A.Close()
		p.B.Close()
		close(p.gone)
	})
}

// Run copies A to B and B to A until either ends, then closes the pair; it returns once both
// copies have. Each chunk read is passed to wait before it is written, and nothing more is read
// meanwhile, so the bytes behind it wait in the kernel's buffers, as on a network path that has
// gone silent; wait returning false ends the copy. With waitEnd, an end (the peer closing) waits
// likewise before it is passed on: a close crosses no partition either.
func (p *Pair) Run(wait func(gone <-chan struct{}) bool, waitEnd bool) {
	done := make(chan struct{}, 2)
	pipe := func(w, r net.Conn) {
		p.forward(w, r, wait, waitEnd)
		p.Close() // stops the other direction's copy too
		done <- struct{}{}
	}
	go pipe(p.A, p.B)
	go pipe(p.B, p.A)
	<-done
	<-done
}

func (p *Pair) forward(w, r net.Conn, wait func(gone <-chan struct{}) bool, waitEnd bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if !wait(p.gone) {
				return
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if waitEnd {
				wait(p.gone)
			}
			return
		}
	}
}
