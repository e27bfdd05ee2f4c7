package store

import "sync"

// LZF as Redis 7.0 builds liblzf 3.6 (src/lzfP.h: HLOG 16, VERY_FAST, not ULTRA_FAST,
// INIT_HTAB 0, LZF_USE_OFFSETS 0, CHECK_INPUT; 3.6 dropped 3.5's ip+4 < in_end test, so a match
// may end at the input's last byte): lzfCompress produces the same bytes as Redis's
// lzf_compress for the same input and output bound, so a DUMP payload or dump.rdb written here
// can be byte-identical to Redis's with rdbcompression yes.
//
// Format: 000LLLLL and L+1 literal bytes; LLLooooo oooooooo, a back reference of L+2 bytes at
// distance o+1; 111ooooo LLLLLLLL oooooooo, one of L+9 bytes.
//
// Redis's hash table is not cleared between calls (INIT_HTAB 0, on the stack): a slot holds a
// pointer from an earlier call or stack garbage. Such a pointer is used only when it lands in
// the current input, after its first byte and at most 8 KiB before the current position, with
// the same three bytes: a valid reference, but one a fresh table would not give. Recompressing
// the same buffer takes the earlier call's path, so every stale pointer it reads is at or after
// the reading position and is refused: the output is the fresh table's. This port always uses a
// fresh table: Redis's output differs only if memory is reused across calls that way (not seen
// in 300 trials of SET, DUMP, DEL of similar 200-byte values on redis-server 7.0.15).

const (
	lzfHLog   = 16
	lzfHSize  = 1 << lzfHLog
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = 1<<8 + 1<<3
)

// lzfTable is a hash table of input positions; an entry is valid only when its epoch is the
// table's, so a table is reused without clearing 512 KiB per call.
type lzfTable struct {
	epoch uint32
	slot  [lzfHSize]uint64 // epoch<<32 | position
}

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

func lzfIdx(h uint32) uint32 { return (h>>(3*8-lzfHLog) - h*5) & (lzfHSize - 1) }

// swap returns the position in h's slot (0, never a valid reference, when it is not of epoch
// ep) and stores p there.
func (t *lzfTable) swap(h uint32, p int, ep uint64) int {
	s := &t.slot[lzfIdx(h)]
	old := *s
	*s = ep | uint64(p)
	if old&^0xffffffff != ep {
		return 0
	}
	return int(uint32(old))
}

// lzfCompress is lzf_compress(in, len(in), out, outLen): nil when the output does not fit in
// outLen bytes by liblzf's own (slightly conservative) checks, else the compressed bytes.
func lzfCompress(in []byte, outLen int) []byte {
	if len(in) == 0 || outLen <= 0 || uint64(len(in)) >= 1<<32-1 {
		return nil
	}
	t := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(t)
	t.epoch++
	if t.epoch == 0 { // wrapped: old entries could look current
		t.slot = [lzfHSize]uint64{}
		t.epoch = 1
	}
	ep := uint64(t.epoch) << 32
	inEnd := len(in)
	out := make([]byte, outLen+4) // liblzf writes at most outLen bytes; the slack is never used
	outEnd := outLen
	ip, op, lit := 0, 1, 0 // op 0 is the first run's length byte
	var hval uint32
	if inEnd >= 2 {
		hval = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip < inEnd-2 {
		hval = hval<<8 | uint32(in[ip+2])
		ref := t.swap(hval, ip, ep)
		if ref < ip && ip-ref-1 < lzfMaxOff && ref > 0 &&
			in[ref] == in[ip] && in[ref+1] == in[ip+1] && in[ref+2] == in[ip+2] {
			off := ip - ref - 1
			n := 2
			maxlen := inEnd - ip - n
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			if lit == 0 {
				op-- // undo the empty run
			}
			if op+3+1 >= outEnd {
				return nil
			}
			// liblzf compares 16 bytes unrolled when maxlen > 16 without checking maxlen
			// between them, so a match can run past maxlen (to the input's end) there.
			done := false
			if maxlen > 16 {
				for k := 0; k < 16; k++ {
					n++
					if in[ref+n] != in[ip+n] {
						done = true
						break
					}
				}
			}
			if !done {
				for {
					n++
					if n >= maxlen || in[ref+n] != in[ip+n] {
						break
					}
				}
			}
			n -= 2
			ip++
			if n < 7 {
				out[op] = byte(off>>8 + n<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(n - 7)
				op += 2
			}
			out[op] = byte(off)
			op += 2 // and start a run
			lit = 0
			ip += n + 1
			if ip >= inEnd-2 {
				break
			}
			ip -= 2 // VERY_FAST: hash the last two positions of the match
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			t.swap(hval, ip, ep)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			t.swap(hval, ip, ep)
			ip++
			continue
		}
		if op >= outEnd {
			return nil
		}
		op, lit = lzfLiteral(out, op, lit, in[ip])
		ip++
	}
	if op+3 > outEnd { // at most 3 bytes can be missing here
		return nil
	}
	for ip < inEnd {
		op, lit = lzfLiteral(out, op, lit, in[ip])
		ip++
	}
	out[op-lit-1] = byte(lit - 1) // end run
	if lit == 0 {
		op--
	}
	return out[:op:op]
}

// lzfMaxRatio bounds LZF's expansion per input byte (264 output bytes for 3 input bytes).
const lzfMaxRatio = 88

// lzfDecompress is liblzf's lzf_decompress into exactly ulen bytes.
func lzfDecompress(in []byte, ulen int) ([]byte, bool) {
	out := make([]byte, 0, ulen)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			n := ctrl + 1
			if i+n > len(in) || len(out)+n > ulen {
				return nil, false
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if i >= len(in) {
				return nil, false
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		n += 2
		if ref < 0 || len(out)+n > ulen {
			return nil, false
		}
		for k := 0; k < n; k++ { // byte by byte: the reference may overlap what is written
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == ulen
}

// lzfLiteral appends b to the literal run being written at out[op] (lit bytes so far, its
// length byte before them), closing the run and opening the next one at lzfMaxLit bytes, as
// liblzf's two copies of this step do. It returns the new op and lit.
func lzfLiteral(out []byte, op, lit int, b byte) (int, int) {
	out[op] = b
	lit++
	op++
	if lit == lzfMaxLit {
		out[op-lit-1] = byte(lit - 1)
		lit = 0
		op++
	}
	return op, lit
}
