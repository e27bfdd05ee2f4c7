package server

import "sync"

// Large reply buffers are recycled rather than left to the collector. A 10,000-entry
// XREADGROUP is a reply of about 1 MB, built in one buffer (cmd_stream.go's entriesReply) and
// copied into the connection's output buffer; when both were fresh allocations each time, a
// million-entry read into a PEL made twice the PEL's size in garbage, and the collector's
// headroom over that garbage, not the PEL, was most of the process's RSS growth.

// smallOut is the output buffer capacity a connection keeps between batches; a larger one
// goes back to bigBufs once written.
const smallOut = 64 << 10

// maxPooledBuf bounds what bigBufs keeps: a rare huge reply's buffer is left to the GC.
const maxPooledBuf = 4 << 20

var bigBufs sync.Pool // of *[]byte, empty, capacity in (smallOut, maxPooledBuf]

// getBuf returns an empty buffer, with capacity for at least min bytes if min > 0.
func getBuf(min int) []byte {
	if p, _ := bigBufs.Get().(*[]byte); p != nil {
		if cap(*p) >= min {
			return (*p)[:0]
		}
		bigBufs.Put(p)
	}
	if min <= 0 {
		return nil
	}
	return make([]byte, 0, min)
}

// putBuf gives b back for reuse; nothing may refer to it afterwards.
func putBuf(b []byte) {
	if cap(b) > smallOut && cap(b) <= maxPooledBuf {
		b = b[:0]
		bigBufs.Put(&b)
	}
}

// resetOut empties c.out once it has been written in full.
func (c *client) resetOut() {
	if cap(c.out) > smallOut {
		putBuf(c.out)
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
}
