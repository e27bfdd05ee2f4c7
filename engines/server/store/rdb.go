package store

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// Redis's DUMP payload (RDB version 10, Redis 7.0) for strings, lists, sets, hashes, streams
// (rdb_stream.go) and sorted sets (rdb_zset.go), so a key can move between Redis and this server with DUMP/RESTORE. Writing
// produces payloads that Redis restores, strings LZF-compressed as Redis's (lzf.go) when asked
// (rdbcompression yes); reading accepts what Redis 7.0 writes, compressed or not.

// RDB object types (rdb.h).
const (
	rdbString         = 0
	rdbSet            = 2
	rdbHash           = 4
	rdbSetIntset      = 11
	rdbHashListpack   = 16
	rdbListQuicklist2 = 18
	rdbVersion        = 10
)

// ErrRDBUnsupported is a payload of a type this server does not restore (modules, zipmaps,
// Redis 7.2's encodings).
var ErrRDBUnsupported = errors.New("store: unsupported RDB type")

var errRDBBad = errors.New("store: bad RDB payload")

// crc64Table is Redis's CRC-64 (Jones polynomial, reflected, no final xor).
var crc64Table = func() (t [256]uint64) {
	const poly = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 bit-reversed
	for i := range t {
		crc := uint64(i)
		for j := 0; j < 8; j++ {
			if crc&1 == 1 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// CRC64 is Redis's crc64(0, p).
func CRC64(p []byte) uint64 {
	var crc uint64
	for _, b := range p {
		crc = crc64Table[byte(crc)^b] ^ crc>>8
	}
	return crc
}

func rdbAppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// rdbAppendString is rdbSaveRawString with rdbcompression no.
func rdbAppendString(b, s []byte) []byte { return rdbAppendStr(b, s, false) }

// rdbAppendStr is rdbSaveRawString: a string of at most 11 bytes that is an integer in
// canonical form within 32 bits is written in the integer encoding, as Redis does; with lzf
// (rdbcompression yes) a longer string of more than 20 bytes is LZF-compressed when that saves
// at least 4 bytes (rdbSaveLzfStringObject: lzf_compress into len-4 bytes); else it is plain.
func rdbAppendStr(b, s []byte, lzf bool) []byte {
	if len(s) <= 11 && len(s) > 0 {
		if n, err := strconv.ParseInt(string(s), 10, 32); err == nil && strconv.FormatInt(n, 10) == string(s) {
			switch {
			case n >= math.MinInt8 && n <= math.MaxInt8:
				return append(b, 0xc0, byte(n))
			case n >= math.MinInt16 && n <= math.MaxInt16:
				return binary.LittleEndian.AppendUint16(append(b, 0xc1), uint16(n))
			}
			return binary.LittleEndian.AppendUint32(append(b, 0xc2), uint32(n))
		}
	}
	if lzf && len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			b = rdbAppendLen(rdbAppendLen(append(b, 0xc3), uint64(len(c))), uint64(len(s))) // RDB_ENC_LZF
			return append(b, c...)
		}
	}
	return append(rdbAppendLen(b, uint64(len(s))), s...)
}

// AppendRDBDump appends v's DUMP payload, its strings LZF-compressed as Redis's are with
// rdbcompression yes when lzf is true; ok is false for a type it cannot write.
func AppendRDBDump(b []byte, v any, lzf bool) ([]byte, bool) {
	start := len(b)
	b, ok := appendRDBObject(b, v, lzf)
	if !ok {
		return b[:start], false
	}
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, CRC64(b[start:])), true
}

// appendRDBObject appends v's type byte and object (rdbSaveObjectType, rdbSaveObject).
func appendRDBObject(b []byte, v any, lzf bool) ([]byte, bool) {
	str := func(b, s []byte) []byte { return rdbAppendStr(b, s, lzf) }
	switch v := v.(type) {
	case *String:
		b = str(append(b, rdbString), v.B)
	case *List:
		// The list's own quicklist nodes (list_nodes.go), so the payload is Redis's.
		b = append(b, rdbListQuicklist2)
		var nodes [][]byte
		var plain []bool
		v.eachNode(func(els [][]byte, isPlain bool) {
			if isPlain {
				nodes = append(nodes, append([]byte(nil), els[0]...))
			} else {
				nodes = append(nodes, appendListpack(nil, els))
			}
			plain = append(plain, isPlain)
		})
		b = rdbAppendLen(b, uint64(len(nodes)))
		for i, n := range nodes {
			container := byte(2) // QUICKLIST_NODE_CONTAINER_PACKED
			if plain[i] {
				container = 1 // QUICKLIST_NODE_CONTAINER_PLAIN
			}
			b = str(append(b, container), n)
		}
	case *Set:
		if v.IsIntset() {
			b = str(append(b, rdbSetIntset), appendIntset(nil, v.ints))
			break
		}
		b = rdbAppendLen(append(b, rdbSet), uint64(v.Len()))
		for _, m := range v.Members() {
			b = str(b, m)
		}
	case *Hash:
		if v.IsListpack() {
			var els [][]byte
			v.Each(func(f, val []byte) { els = append(els, f, val) })
			b = str(append(b, rdbHashListpack), appendListpack(nil, els))
			break
		}
		b = rdbAppendLen(append(b, rdbHash), uint64(v.Len()))
		v.Each(func(f, val []byte) { b = str(str(b, f), val) })
	case *Stream:
		b = appendRDBStream(append(b, rdbStreamListpacks2), v, lzf)
	case *Zset:
		b = appendRDBZset(b, v, lzf) // rdb_zset.go
	default:
		return b, false
	}
	return b, true
}

// appendIntset is an intset blob with the smallest encoding that holds every member.
func appendIntset(b []byte, ints []int64) []byte {
	enc := 2
	for _, n := range ints {
		if n < -1<<31 || n > 1<<31-1 {
			enc = 8
		} else if (n < -1<<15 || n > 1<<15-1) && enc < 4 {
			enc = 4
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(enc))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ints)))
	for _, n := range ints {
		switch enc {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(n))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(n))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(n))
		}
	}
	return b
}

// appendListpack encodes elems as a Redis listpack (integers in canonical form as integers).
func appendListpack(b []byte, elems [][]byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0)
	for _, e := range elems {
		at := len(b)
		if n, err := strconv.ParseInt(string(e), 10, 64); err == nil && len(e) <= 20 && strconv.FormatInt(n, 10) == string(e) {
			switch {
			case n >= 0 && n <= 127:
				b = append(b, byte(n))
			case n >= -4096 && n <= 4095:
				u := uint16(n) & 0x1fff
				b = append(b, 0xc0|byte(u>>8), byte(u))
			case n >= -1<<15 && n < 1<<15:
				b = binary.LittleEndian.AppendUint16(append(b, 0xf1), uint16(n))
			case n >= -1<<23 && n < 1<<23:
				u := uint32(n)
				b = append(b, 0xf2, byte(u), byte(u>>8), byte(u>>16))
			case n >= -1<<31 && n < 1<<31:
				b = binary.LittleEndian.AppendUint32(append(b, 0xf3), uint32(n))
			default:
				b = binary.LittleEndian.AppendUint64(append(b, 0xf4), uint64(n))
			}
		} else {
			switch l := len(e); {
			case l < 64:
				b = append(b, 0x80|byte(l))
			case l < 4096:
				b = append(b, 0xe0|byte(l>>8), byte(l))
			default:
				b = binary.LittleEndian.AppendUint32(append(b, 0xf0), uint32(l))
			}
			b = append(b, e...)
		}
		b = appendBacklen(b, uint64(len(b)-at))
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start))
	n := len(elems)
	if n > 65535 {
		n = 65535
	}
	binary.LittleEndian.PutUint16(b[start+4:], uint16(n))
	return b
}

// appendBacklen is lpEncodeBacklen: the entry's length, readable from its end.
func appendBacklen(b []byte, l uint64) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte(l>>7&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
	}
	return append(b, byte(l>>28), byte(l>>21&127)|128, byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
}

func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// packedEntries checks the frame a listpack (header 6 bytes) or a ziplist (header 10) shares:
// the total length first and 0xff last, an entry count (16 bits) just before the entries. It
// returns a slice sized from that count (65535: unknown), bounded by the bytes there are:
// growing the slice was most of a large file's load time.
func packedEntries(p []byte, header int) ([][]byte, bool) {
	if len(p) < header+1 || int(binary.LittleEndian.Uint32(p)) != len(p) || p[len(p)-1] != 0xff {
		return nil, false
	}
	if n := int(binary.LittleEndian.Uint16(p[header-2:])); n < 65535 && n <= len(p) {
		return make([][]byte, 0, n), true
	}
	return nil, true
}

// packedInt returns the decimal string of the signed little-endian integer of w bytes at the
// start of p, as listpacks and ziplists store integers.
func packedInt(p []byte, w int) []byte {
	var u uint64
	for k := w - 1; k >= 0; k-- {
		u = u<<8 | uint64(p[k])
	}
	v := int64(u<<(64-8*w)) >> (64 - 8*w) // sign-extend
	return strconv.AppendInt(nil, v, 10)
}

// decodeListpack returns a listpack's elements (integers as their decimal strings).
func decodeListpack(p []byte) ([][]byte, error) {
	out, ok := packedEntries(p, 6)
	if !ok {
		return nil, errRDBBad
	}
	i, end := 6, len(p)-1
	for i < end {
		c := p[i]
		var n int // encoding + data length
		var e []byte
		need := func(k int) bool { return i+k <= end }
		switch {
		case c&0x80 == 0:
			n, e = 1, strconv.AppendInt(nil, int64(c), 10)
		case c&0xc0 == 0x80:
			l := int(c & 0x3f)
			if !need(1 + l) {
				return nil, errRDBBad
			}
			n, e = 1+l, append([]byte(nil), p[i+1:i+1+l]...)
		case c&0xe0 == 0xc0:
			if !need(2) {
				return nil, errRDBBad
			}
			u := int64(c&0x1f)<<8 | int64(p[i+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			n, e = 2, strconv.AppendInt(nil, u, 10)
		case c&0xf0 == 0xe0:
			if !need(2) {
				return nil, errRDBBad
			}
			l := int(c&0x0f)<<8 | int(p[i+1])
			if !need(2 + l) {
				return nil, errRDBBad
			}
			n, e = 2+l, append([]byte(nil), p[i+2:i+2+l]...)
		case c == 0xf0:
			if !need(5) {
				return nil, errRDBBad
			}
			l := int(binary.LittleEndian.Uint32(p[i+1:]))
			if l < 0 || !need(5+l) {
				return nil, errRDBBad
			}
			n, e = 5+l, append([]byte(nil), p[i+5:i+5+l]...)
		case c >= 0xf1 && c <= 0xf4:
			w := map[byte]int{0xf1: 2, 0xf2: 3, 0xf3: 4, 0xf4: 8}[c]
			if !need(1 + w) {
				return nil, errRDBBad
			}
			n, e = 1+w, packedInt(p[i+1:], w)
		default:
			return nil, errRDBBad
		}
		i += n + backlenSize(n)
		if i > end {
			return nil, errRDBBad
		}
		out = append(out, e)
	}
	return out, nil
}

type rdbReader struct {
	p   []byte
	bad bool
}

func (r *rdbReader) byte1() byte {
	if len(r.p) == 0 {
		r.bad = true
		return 0
	}
	c := r.p[0]
	r.p = r.p[1:]
	return c
}

func (r *rdbReader) take(n int) []byte {
	if n < 0 || n > len(r.p) {
		r.bad = true
		r.p = nil
		return nil
	}
	out := r.p[:n]
	r.p = r.p[n:]
	return out
}

// length reads an RDB length; encoded reports a special string encoding (its value in n).
func (r *rdbReader) length() (n uint64, encoded bool) {
	c := r.byte1()
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false
	case 1:
		return uint64(c&0x3f)<<8 | uint64(r.byte1()), false
	case 3:
		return uint64(c & 0x3f), true
	}
	switch c {
	case 0x80:
		if b := r.take(4); !r.bad {
			return uint64(binary.BigEndian.Uint32(b)), false
		}
		return 0, false
	case 0x81:
		if b := r.take(8); !r.bad {
			return binary.BigEndian.Uint64(b), false
		}
		return 0, false
	}
	r.bad = true
	return 0, false
}

// count reads a length that must fit in what is left.
func (r *rdbReader) count() int {
	n, enc := r.length()
	if enc || n > uint64(len(r.p)) {
		r.bad = true
		return 0
	}
	return int(n)
}

// str reads an RDB string: plain, an integer encoding, or LZF-compressed.
func (r *rdbReader) str() []byte {
	n, enc := r.length()
	if r.bad {
		return nil
	}
	if !enc {
		if n > uint64(len(r.p)) {
			r.bad = true
			return nil
		}
		return append([]byte(nil), r.take(int(n))...)
	}
	switch n {
	case 0:
		return strconv.AppendInt(nil, int64(int8(r.byte1())), 10)
	case 1:
		b := r.take(2)
		if r.bad {
			return nil
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10)
	case 2:
		b := r.take(4)
		if r.bad {
			return nil
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10)
	case 3:
		clen, _ := r.length()
		ulen, _ := r.length()
		// LZF expands 3 input bytes to at most 264 (a back reference of 7+255+2): a larger
		// claimed length is damage, refused before it is allocated.
		if r.bad || clen > uint64(len(r.p)) || ulen > 1<<32 || ulen > clen*lzfMaxRatio+lzfMaxRatio {
			r.bad = true
			return nil
		}
		out, ok := lzfDecompress(r.take(int(clen)), int(ulen))
		if !ok {
			r.bad = true
		}
		return out
	}
	r.bad = true
	return nil
}

// RDBLimits are the settings a restored value is built with (its encoding, its stream nodes).
type RDBLimits struct {
	IntsetMax, HashMaxEntries, HashMaxValue int
	ZsetMaxEntries, ZsetMaxValue            int
	NodeMaxEntries, NodeMaxBytes            int
	// ListFill is list-max-listpack-size for a restored list's later pushes, through
	// ListFillOf; the zero value is Redis's default, -2.
	ListFill int
}

// ListFillOf is list-max-listpack-size fill as RDBLimits.ListFill takes it (0 makes the same
// nodes as 1, normFill).
func ListFillOf(fill int) int { return int(normFill(fill)) }

func (lim RDBLimits) listFill() int {
	if lim.ListFill == 0 {
		return DefaultListFill
	}
	return lim.ListFill
}

// DecodeRDBDump decodes a DUMP payload written by Redis 7.0 (or by AppendRDBDump), checking
// its RDB version and CRC.
func DecodeRDBDump(p []byte, lim RDBLimits) (any, error) {
	if len(p) < 10 {
		return nil, ErrRDBChecksum // verifyDumpPayload's answer to a short payload
	}
	body, footer := p[:len(p)-10], p[len(p)-10:]
	ver := binary.LittleEndian.Uint16(footer)
	if ver > rdbVersion || binary.LittleEndian.Uint64(footer[2:]) != CRC64(p[:len(p)-8]) {
		return nil, ErrRDBChecksum
	}
	if len(body) == 0 {
		return nil, errRDBBad
	}
	r := &rdbReader{p: body[1:]}
	v, err := r.value(body[0], lim)
	if err != nil {
		return nil, err
	}
	if r.bad || len(r.p) != 0 {
		return nil, errRDBBad
	}
	return v, nil
}

// value decodes one object of RDB type typ (a DUMP payload's or an RDB file's, rdbfile.go);
// ErrRDBUnsupported for a type this server does not have.
func (r *rdbReader) value(typ byte, lim RDBLimits) (any, error) {
	intsetMax, hashMaxEntries, hashMaxValue := lim.IntsetMax, lim.HashMaxEntries, lim.HashMaxValue
	var v any
	switch typ {
	case rdbString:
		v = &String{B: r.str()}
	case rdbListQuicklist2:
		// Redis keeps the dumped nodes as they are, an empty listpack skipped (rdbLoadObject).
		l := NewList(lim.listFill())
		nodes := r.count()
		for i := 0; i < nodes && !r.bad; i++ {
			container, _ := r.length()
			blob := r.str()
			if r.bad {
				break
			}
			if container == 1 { // a plain node: one element
				l.appendNode([][]byte{blob}, true)
				continue
			}
			if err := pushPacked(l, blob, decodeListpack); err != nil {
				return nil, err
			}
		}
		v = l
	case rdbSet:
		s := NewSet()
		n := r.count()
		for i := 0; i < n && !r.bad; i++ {
			s.Add(r.str(), intsetMax)
		}
		v = s
	case rdbSetIntset:
		blob := r.str()
		if r.bad || len(blob) < 8 {
			return nil, errRDBBad
		}
		enc, n := int(binary.LittleEndian.Uint32(blob)), int(binary.LittleEndian.Uint32(blob[4:]))
		if (enc != 2 && enc != 4 && enc != 8) || len(blob) != 8+enc*n {
			return nil, errRDBBad
		}
		s := NewSet()
		for i := 0; i < n; i++ {
			x := blob[8+i*enc:]
			var m int64
			switch enc {
			case 2:
				m = int64(int16(binary.LittleEndian.Uint16(x)))
			case 4:
				m = int64(int32(binary.LittleEndian.Uint32(x)))
			default:
				m = int64(binary.LittleEndian.Uint64(x))
			}
			s.Add(strconv.AppendInt(nil, m, 10), intsetMax)
		}
		v = s
	case rdbHash:
		h := NewHash()
		n := r.count()
		for i := 0; i < n && !r.bad; i++ {
			f := r.str()
			h.Set(f, r.str(), hashMaxEntries, hashMaxValue)
		}
		v = h
	case rdbHashListpack:
		h, err := r.packedHash(decodeListpack, lim)
		if err != nil {
			return nil, err
		}
		v = h
	case rdbZset, rdbZset2, rdbZsetZiplist, rdbZsetListpack:
		return r.zsetValue(typ, lim) // rdb_zset.go
	case rdbStreamListpacks2, rdbStreamListpacks:
		st, err := decodeRDBStream(r, lim, typ == rdbStreamListpacks)
		if err != nil {
			return nil, err
		}
		v = st
	default:
		return r.ziplistValue(typ, lim) // Redis 6's encodings (rdb_ziplist.go), or unsupported
	}
	if r.bad {
		return nil, errRDBBad
	}
	return v, nil
}

// pushPacked appends a list node's elements, decoded from one listpack or ziplist, to l as one
// node of their own, as Redis 7.0 loads a quicklist (a ziplist node becomes a listpack node).
func pushPacked(l *List, blob []byte, decode func([]byte) ([][]byte, error)) error {
	els, err := decode(blob)
	if err != nil {
		return err
	}
	l.appendNode(els, false)
	return nil
}

// packedHash reads a small hash stored as one listpack or ziplist of fields and values.
func (r *rdbReader) packedHash(decode func([]byte) ([][]byte, error), lim RDBLimits) (*Hash, error) {
	blob := r.str()
	if r.bad {
		return nil, errRDBBad
	}
	els, err := decode(blob)
	if err != nil || len(els)%2 != 0 {
		return nil, errRDBBad
	}
	h := NewHash()
	for i := 0; i < len(els); i += 2 {
		h.Set(els[i], els[i+1], lim.HashMaxEntries, lim.HashMaxValue)
	}
	return h, nil
}

// ErrRDBChecksum is a payload whose RDB version or CRC is wrong.
var ErrRDBChecksum = errors.New("store: DUMP payload version or checksum are wrong")
