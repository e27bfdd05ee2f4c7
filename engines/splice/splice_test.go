package splice

import (
	"io"
	"net"
	"testing"
	"time"
)

// A spliced pair copies each way; while its gate is held a chunk waits, and is written once the
// hold ends; closing one end closes the pair and Run returns.
func TestPairHoldsAtItsGate(t *testing.T) {
	for _, waitEnd := range []bool{false, true} {
		clientA, a := net.Pipe()
		b, serverB := net.Pipe()
		hold := make(chan struct{})
		gate := func(gone <-chan struct{}) bool { // held until hold is closed
			select {
			case <-hold:
				return true
			case <-gone:
				return false
			}
		}
		p := NewPair(a, b)
		ran := make(chan struct{})
		go func() { p.Run(gate, waitEnd); close(ran) }()

		got := make(chan string, 1)
		go func() {
			buf := make([]byte, 5)
			io.ReadFull(serverB, buf)
			got <- string(buf)
		}()
		go clientA.Write([]byte("hello"))
		select {
		case s := <-got:
			t.Fatalf("waitEnd %v: %q passed a held gate", waitEnd, s)
		case <-time.After(100 * time.Millisecond):
		}
		close(hold)
		if s := <-got; s != "hello" {
			t.Fatalf("waitEnd %v: got %q after the hold", waitEnd, s)
		}
		go serverB.Write([]byte("back"))
		buf := make([]byte, 4)
		if _, err := io.ReadFull(clientA, buf); err != nil || string(buf) != "back" {
			t.Fatalf("waitEnd %v: the other way: %q %v", waitEnd, buf, err)
		}
		clientA.Close()
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			t.Fatalf("waitEnd %v: Run did not return once an end closed", waitEnd)
		}
		select {
		case <-p.Gone():
		default:
			t.Fatalf("waitEnd %v: the pair is not closed", waitEnd)
		}
	}
}
