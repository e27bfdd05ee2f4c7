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

// Small replies are recycled too: at light load every XADD answers a blocked consumer with a
// one-entry XREADGROUP reply, whose buffer, grown by append from nothing and dropped after the
// copy into the connection's output buffer, was a third of the stream cell's garbage (~750
// bytes per XADD and read). smallBuf is the least capacity such a buffer starts with.
const smallBuf = 1 << 10

var smallBufs sync.Pool // of *[]byte, empty, capacity in [smallBuf, smallOut]

// getBuf returns an empty buffer, with capacity for at least min bytes if min > 0.
func getBuf(min int) []byte {
	if p, _ := bigBufs.Get().(*[]byte); p != nil {
		if cap(*p) >= min {
			return (*p)[:0]
		}
		bigBufs.Put(p)
	}
	if min <= 0 {
		if p, _ := smallBufs.Get().(*[]byte); p != nil {
			return (*p)[:0]
		}
		return make([]byte, 0, smallBuf)
	}
	return make([]byte, 0, min)
}

// putBuf gives b back for reuse; nothing may refer to it afterwards.
func putBuf(b []byte) {
	switch {
	case cap(b) > smallOut && cap(b) <= maxPooledBuf:
		b = b[:0]
		bigBufs.Put(&b)
	case cap(b) >= smallBuf && cap(b) <= smallOut:
		b = b[:0]
		smallBufs.Put(&b)
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
