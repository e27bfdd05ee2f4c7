package store

import (
	"encoding/binary"
	"strconv"
)

// Redis 6's ziplist encodings (RDB 9, still read by Redis 7.0): a list as one ziplist or a
// quicklist of ziplists, a small hash as one ziplist of fields and values (a small sorted set's
// ziplist is read in rdb_zset.go). The older zipmap stays unsupported.
const (
	rdbListZiplist   = 10
	rdbHashZiplist   = 13
	rdbListQuicklist = 14
)

// ziplistValue decodes the Redis 6 types; ErrRDBUnsupported for any other.
func (r *rdbReader) ziplistValue(typ byte, lim RDBLimits) (any, error) {
	switch typ {
	case rdbListZiplist, rdbListQuicklist:
		nodes := 1
		if typ == rdbListQuicklist {
			nodes = r.count()
		}
		// Redis 7.0 pushes a ziplist list's elements one by one (quicklistPushTail) and keeps
		// a quicklist's ziplists as listpack nodes.
		l := NewList(lim.listFill())
		for i := 0; i < nodes && !r.bad; i++ {
			blob := r.str()
			if r.bad {
				break
			}
			if typ == rdbListZiplist {
				els, err := decodeZiplist(blob)
				if err != nil {
					return nil, err
				}
				for _, e := range els {
					l.PushRight(e)
				}
				continue
			}
			if err := pushPacked(l, blob, decodeZiplist); err != nil {
				return nil, err
			}
		}
		if r.bad {
			return nil, errRDBBad
		}
		return l, nil
	case rdbHashZiplist:
		h, err := r.packedHash(decodeZiplist, lim)
		if err != nil {
			return nil, err // not a typed nil *Hash in the interface
		}
		return h, nil
	}
	return nil, ErrRDBUnsupported
}

// decodeZiplist returns a ziplist's elements (integers as their decimal strings): zlbytes,
// zltail, zllen, then entries of prevlen, encoding and data, then 0xff (ziplist.c).
func decodeZiplist(p []byte) ([][]byte, error) {
	out, ok := packedEntries(p, 10)
	if !ok {
		return nil, errRDBBad
	}
	i, end := 10, len(p)-1
	for i < end {
		// prevlen: one byte, or 0xfe and four
		if p[i] == 0xfe {
			i += 5
		} else {
			i++
		}
		if i >= end {
			return nil, errRDBBad
		}
		c := p[i]
		need := func(k int) bool { return i+k <= end }
		var e []byte
		var n int // encoding + data length
		switch {
		case c>>6 == 0, c>>6 == 1, c == 0x80:
			var l, h int
			switch c >> 6 {
			case 0:
				l, h = int(c&0x3f), 1
			case 1:
				if !need(2) {
					return nil, errRDBBad
				}
				l, h = int(c&0x3f)<<8|int(p[i+1]), 2
			default:
				if !need(5) {
					return nil, errRDBBad
				}
				l, h = int(binary.BigEndian.Uint32(p[i+1:])), 5
			}
			if l < 0 || !need(h+l) {
				return nil, errRDBBad
			}
			n, e = h+l, append([]byte(nil), p[i+h:i+h+l]...)
		case c >= 0xf1 && c <= 0xfd: // an immediate 0 to 12
			n, e = 1, strconv.AppendInt(nil, int64(c&0x0f)-1, 10)
		default:
			w := map[byte]int{0xc0: 2, 0xd0: 4, 0xe0: 8, 0xf0: 3, 0xfe: 1}[c]
			if w == 0 || !need(1+w) {
				return nil, errRDBBad
			}
			n, e = 1+w, packedInt(p[i+1:], w)
		}
		i += n
		out = append(out, e)
	}
	if i != end {
		return nil, errRDBBad
	}
	return out, nil
}
