package redisq

import "github.com/redis/go-redis/v9"

// pushBuf is the argument space one producer connection reuses from Send to Send, so that a
// batch's commands cost go-redis's command objects and little else: the arguments of all of
// its commands live in one []any, each payload is boxed as a pointer into vals (boxing a []byte
// itself allocates its slice header), and an XADD's reply ID is read into ids rather than into
// a new string. Reuse is safe because a connection carries one Send at a time (batches in
// flight each hold a connection of their own, see producer) and Pipelined returns only after
// every reply of the batch is read: nothing of a batch is referenced by go-redis once Send
// returns. Design.Push, which has no connection of its own, passes a new one each time.
type pushBuf struct {
	args []any
	vals []payloadArg
	cmds []redis.Cmder
	ids  []byte
}

// payloadArg is a payload go-redis writes as a bulk string (it takes any
// encoding.BinaryMarshaler); a *payloadArg fits an interface without an allocation.
type payloadArg struct{ b []byte }

func (p *payloadArg) MarshalBinary() ([]byte, error) { return p.b, nil }

// xaddIDLen holds any stream ID (two 20-digit numbers and a dash).
const xaddIDLen = 48

// start readies b for a batch of n payloads whose commands take nargs arguments in all, and
// returns the batch's command slice (one per payload).
func (b *pushBuf) start(n, nargs int) []redis.Cmder {
	if cap(b.vals) < n {
		b.vals = make([]payloadArg, n)
		b.cmds = make([]redis.Cmder, n)
	}
	if cap(b.args) < nargs {
		b.args = make([]any, 0, nargs)
	}
	b.vals, b.cmds, b.args = b.vals[:0], b.cmds[:n], b.args[:0]
	return b.cmds
}

// payload boxes pl for an argument list. start reserved room for every payload of the batch, so
// vals never moves while its elements are referenced.
func (b *pushBuf) payload(pl []byte) any {
	b.vals = append(b.vals, payloadArg{b: pl})
	return &b.vals[len(b.vals)-1]
}

// since returns the arguments appended to b.args from lo on as one command's list (start
// reserved the room, so earlier lists stay where they are).
func (b *pushBuf) since(lo int) []any { return b.args[lo:len(b.args):len(b.args)] }

// idBuf is the i-th payload's room for its XADD reply.
func (b *pushBuf) idBuf(i, n int) []byte {
	if len(b.ids) < n*xaddIDLen {
		b.ids = make([]byte, n*xaddIDLen)
	}
	return b.ids[i*xaddIDLen : (i+1)*xaddIDLen : (i+1)*xaddIDLen]
}

// done drops the batch's references (payloads, commands) so that Send retains nothing.
func (b *pushBuf) done() {
	clear(b.vals)
	clear(b.cmds)
	clear(b.args)
}
