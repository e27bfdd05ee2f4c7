package server

import (
	"io"
	"net"
	"sync"
)

// A subscriber's unwritten output is a queue of segments, not one contiguous buffer. A PUBLISH
// encodes its message once (per protocol, and per pattern for pattern subscribers) and every
// subscriber's queue refers to that encoding, which nobody writes to again; replies and small
// messages are copied into chunks of outChunk bytes, as Redis fills its 16 KB reply blocks. A
// slow subscriber's backlog is so a list of references. As one buffer grown by append, a 57 MB
// burst was copied into each subscriber's buffer, the buffer re-copied at every doubling under
// the store lock (a publisher waited ~100 ms behind one such copy) and held at up to twice the
// burst: 125 MB of RSS where Redis peaked at 52.

// outChunk is the capacity of the chunks small output is copied into (Redis's
// PROTO_REPLY_CHUNK_BYTES).
const outChunk = 16 << 10

// shareMin is the least message a queue refers to rather than copies: below it a reference
// (a segment, and a small allocation kept alive per message) costs more than the copy.
const shareMin = 512

// maxSpareSegs bounds the segment list a written-out queue keeps for reuse: a burst's goes to
// the collector once written.
const maxSpareSegs = 1024

type outSeg struct {
	b     []byte
	owned bool // one of the queue's chunks (from chunks), which later copies may fill
}

// outQueue is unwritten output, in order. The zero value is empty.
type outQueue struct {
	segs []outSeg
	n    int      // bytes queued
	iov  [][]byte // scratch for a vectored write (writeTo, loopConn.Writev)
	// spare is a written-out chunk kept for the next copy: a subscriber sent a message now and
	// then reuses one chunk (as Redis's client keeps its 16 KB buffer), instead of taking one
	// from the pool and allocating the pool's pointer to put it back, per batch.
	spare []byte
}

var chunks sync.Pool // of *[]byte, empty, capacity outChunk

// chunk returns an empty chunk for n bytes: the spare, one from the pool, or a new one.
func (q *outQueue) chunk(n int) []byte {
	if n > outChunk {
		return make([]byte, 0, n)
	}
	if q.spare != nil {
		b := q.spare
		q.spare = nil
		return b
	}
	if p, _ := chunks.Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, outChunk)
}

// pushCopy queues a copy of b (a reply buffer the caller goes on using).
func (q *outQueue) pushCopy(b []byte) {
	q.n += len(b)
	if k := len(q.segs); k > 0 && q.segs[k-1].owned {
		s := &q.segs[k-1]
		m := min(len(b), cap(s.b)-len(s.b))
		s.b = append(s.b, b[:m]...)
		b = b[m:]
	}
	if len(b) > 0 {
		q.segs = append(q.segs, outSeg{b: append(q.chunk(len(b)), b...), owned: true})
	}
}

// pushShared queues b itself, or a copy if it is small. Nobody may modify b afterwards.
func (q *outQueue) pushShared(b []byte) {
	if len(b) < shareMin {
		q.pushCopy(b)
		return
	}
	q.n += len(b)
	q.segs = append(q.segs, outSeg{b: b})
}

// prepend puts rest (output taken from q and not written) back before what q holds now.
func (q *outQueue) prepend(rest *outQueue) {
	rest.segs = append(rest.segs, q.segs...)
	rest.n += q.n
	clear(q.segs)
	q.segs, q.n = rest.segs, rest.n
	rest.segs, rest.n = nil, 0
}

// advance drops the first n bytes (written).
func (q *outQueue) advance(n int) {
	q.n -= n
	i := 0
	for ; i < len(q.segs) && n >= len(q.segs[i].b); i++ {
		n -= len(q.segs[i].b)
	}
	if n > 0 {
		q.segs[i].b = q.segs[i].b[n:]
	}
	q.segs = q.segs[:copy(q.segs, q.segs[i:])]
	clear(q.segs[len(q.segs):cap(q.segs)])
}

// vectors is the queue as a list of buffers, in q.iov (valid until q changes).
func (q *outQueue) vectors() [][]byte {
	iov := q.iov[:0]
	for _, s := range q.segs {
		if len(s.b) > 0 {
			iov = append(iov, s.b)
		}
	}
	q.iov = iov
	return iov
}

// writeTo writes the whole queue to w (one writev per 1,024 segments on a TCP connection).
func (q *outQueue) writeTo(w io.Writer) (int64, error) {
	bufs := net.Buffers(q.vectors())
	return bufs.WriteTo(w)
}

// reset empties a written-out queue for reuse: its chunks go back to the pool, a burst's
// segment list to the collector.
func (q *outQueue) reset() {
	for i := range q.segs {
		if s := q.segs[i].b; q.segs[i].owned && cap(s) == outChunk {
			if q.spare == nil {
				q.spare = s[:0]
			} else {
				p := s[:0] // its own variable: taking s's address would move s to the heap
				chunks.Put(&p)
			}
		}
	}
	clear(q.segs)
	clear(q.iov[:cap(q.iov)])
	q.segs, q.n = q.segs[:0], 0
	if cap(q.segs) > maxSpareSegs {
		q.segs, q.iov = nil, nil
	}
}
