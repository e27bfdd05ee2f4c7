package sentinelq

import (
	"net"
	"strconv"
	"sync"

	"qbench/engines/splice"
)

// proxy carries every connection the replicas and the Sentinels make to the primary qbench
// started: they know it by the proxy's address (replicaof, sentinel monitor, and the primary's
// own replica-announce-port), while clients dial its own port. So a partition can cut it off
// from them and leave it reachable by the clients. The cut is in user space, in qbench's own
// process, for the reasons engines/rediscluster's Links gives: it needs no packet filter, and
// nothing is left behind when qbench dies.
//
// A partition is a black hole, not a reset: while held, nothing is forwarded either way, open
// connections stay open, and new ones are accepted and left unanswered. The primary therefore
// goes on counting its replicas as connected, and only their acknowledgements age, as behind a
// real network partition; it refuses writes under min-replicas-to-write once those are older
// than min-replicas-max-lag. A closed connection would tell it at once that a replica was gone.
type proxy struct {
	ln   net.Listener
	port int
	done chan struct{} // closed by close

	mu     sync.Mutex
	to     string        // the primary's own address, set by start
	hold   chan struct{} // non-nil while held; closed by release
	conns  map[*splice.Pair]struct{}
	closed bool
}

// newProxy listens on a free port of 127.0.0.1; start points it at the primary.
func newProxy() (*proxy, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &proxy{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, done: make(chan struct{}), conns: map[*splice.Pair]struct{}{}}, nil
}

// addr is the address the replicas and Sentinels know the primary by.
func (p *proxy) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// start forwards to the primary at to and starts accepting.
func (p *proxy) start(to string) {
	p.mu.Lock()
	p.to = to
	p.mu.Unlock()
	go func() {
		for {
			c, err := p.ln.Accept()
			if err != nil {
				return // closed
			}
			go p.serve(c)
		}
	}()
}

// gate is the hold in force, nil when none.
func (p *proxy) gate() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hold
}

// wait waits out the hold in force; false when gone (the connection or the proxy closed).
func (p *proxy) wait(gone <-chan struct{}) bool {
	g := p.gate()
	if g == nil {
		return true
	}
	select {
	case <-g:
		return true
	case <-gone:
		return false
	case <-p.done:
		return false
	}
}

func (p *proxy) serve(a net.Conn) {
	// A connection made while held is accepted and answered by nothing, as a SYN across a
	// partition would go unanswered; it goes through once the hold ends.
	if !p.wait(nil) {
		a.Close()
		return
	}
	p.mu.Lock()
	to, closed := p.to, p.closed
	p.mu.Unlock()
	if closed {
		a.Close()
		return
	}
	b, err := net.Dial("tcp4", to)
	if err != nil {
		a.Close()
		return
	}
	k := splice.NewPair(a, b)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		k.Close()
		return
	}
	p.conns[k] = struct{}{}
	p.mu.Unlock()
	// While held, each chunk read waits for the hold to end before it is written, as does an end
	// closing: a replica that gives the primary up (promoted, or pointed at another) must not
	// tell it so through a held link.
	k.Run(p.wait, true)
	p.mu.Lock()
	delete(p.conns, k)
	p.mu.Unlock()
}

// holdAll starts the partition: nothing more is forwarded either way until release.
func (p *proxy) holdAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold == nil {
		p.hold = make(chan struct{})
	}
}

// release ends the partition: what waited is forwarded, as a healed network delivers what TCP
// was retransmitting; the ends that have given up meanwhile have closed their connections.
func (p *proxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold != nil {
		close(p.hold)
		p.hold = nil
	}
}

// held reports whether a partition is in force.
func (p *proxy) held() bool { return p.gate() != nil }

// close stops accepting and closes every proxied connection.
func (p *proxy) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.done)
	for k := range p.conns {
		k.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
}
