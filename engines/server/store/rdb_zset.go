package store

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Sorted sets in Redis's RDB encodings. Redis 7.0 writes a small zset (listpack-encoded in
// memory) as ZSET_LISTPACK: one listpack of member, score, member, score... in ascending
// order, a score stored as an integer when it is one within +-2^62 (-0 included: it reads back
// 0) and otherwise as zzlInsertAt's text ("%.17g", "inf", "-inf"); and a skiplist-encoded zset
// as ZSET_2: the count, then member and 8-byte little-endian binary double, from the greatest to
// the smallest. Both are written here the same way, so a payload is byte-identical to Redis's,
// LZF included (lzf.go) when both compress (rdbcompression yes).
// Loading also takes ZSET (Redis < 5: scores as text) and ZSET_ZIPLIST (Redis 6).
const (
	rdbZset         = 3
	rdbZset2        = 5
	rdbZsetZiplist  = 12
	rdbZsetListpack = 17
)

// appendRDBZset appends z's type byte and object.
func appendRDBZset(b []byte, z *Zset, lzf bool) []byte {
	if z.IsListpack() {
		els := make([][]byte, 0, 2*z.Len())
		z.Range(0, z.Len()-1, false, func(m []byte, s float64) bool {
			els = append(els, m, zsetScoreText(s))
			return true
		})
		return rdbAppendStr(append(b, rdbZsetListpack), appendListpack(nil, els), lzf)
	}
	b = rdbAppendLen(append(b, rdbZset2), uint64(z.Len()))
	z.Range(0, z.Len()-1, true, func(m []byte, s float64) bool {
		b = rdbAppendStr(b, m, lzf)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s))
		return true
	})
	return b
}

// zsetScoreText is the listpack entry Redis 7.0's zzlInsertAt stores for score: an integer
// (double2ll: integral and within +-LLONG_MAX/2), else d2string's text. appendListpack encodes
// the integer's decimal string as a listpack integer, as lpAppendInteger does.
func zsetScoreText(s float64) []byte {
	if s >= -float64(math.MaxInt64/2) && s <= float64(math.MaxInt64/2) && s == math.Trunc(s) {
		return strconv.AppendInt(nil, int64(s), 10)
	}
	switch {
	case math.IsInf(s, 1):
		return []byte("inf")
	case math.IsInf(s, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, s, 'g', 17, 64) // C's "%.17g": same digits, same exponent form
}

// parseZsetScore reads a listpack or ziplist score (zzlStrtod); NaN and junk are refused.
func parseZsetScore(b []byte) (float64, bool) {
	s, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !math.IsInf(s, 0) || math.IsNaN(s) {
		return 0, false
	}
	return s, true
}

// zsetValue decodes one of the four zset types. Like Redis's rdbLoadObject: a packed zset stays
// a listpack unless it has more than zset-max-listpack-entries members; a ZSET or ZSET_2 one is
// a listpack when it has at most that many and no member longer than zset-max-listpack-value.
// An empty zset, a duplicate member or a NaN score is a bad payload.
func (r *rdbReader) zsetValue(typ byte, lim RDBLimits) (any, error) {
	var ms [][]byte
	var ss []float64
	maxLen := 0
	switch typ {
	case rdbZsetListpack, rdbZsetZiplist:
		blob := r.str()
		if r.bad {
			return nil, errRDBBad
		}
		decode := decodeListpack
		if typ == rdbZsetZiplist {
			decode = decodeZiplist
		}
		els, err := decode(blob)
		if err != nil || len(els)%2 != 0 {
			return nil, errRDBBad
		}
		for i := 0; i < len(els); i += 2 {
			s, ok := parseZsetScore(els[i+1])
			if !ok {
				return nil, errRDBBad
			}
			ms, ss = append(ms, els[i]), append(ss, s)
		}
		maxLen = -1 // the member lengths do not convert a packed zset
	case rdbZset, rdbZset2:
		n := r.count()
		for i := 0; i < n && !r.bad; i++ {
			m := r.str()
			var s float64
			if typ == rdbZset2 {
				if p := r.take(8); !r.bad {
					s = math.Float64frombits(binary.LittleEndian.Uint64(p))
				}
			} else {
				s = r.textDouble()
			}
			if r.bad || math.IsNaN(s) {
				return nil, errRDBBad
			}
			if len(m) > maxLen {
				maxLen = len(m)
			}
			ms, ss = append(ms, m), append(ss, s)
		}
	default:
		return nil, ErrRDBUnsupported
	}
	if r.bad || len(ms) == 0 {
		return nil, errRDBBad
	}
	z := NewZset(len(ms) <= lim.ZsetMaxEntries && maxLen <= lim.ZsetMaxValue)
	for i, m := range ms {
		if !z.Set(m, ss[i], 1<<62, 1<<62) { // the encoding is chosen above: no limit converts it here
			return nil, errRDBBad
		}
	}
	return z, nil
}

// textDouble is rdbLoadDoubleValue: a length byte (253 nan, 254 inf, 255 -inf) and that many
// bytes of decimal text.
func (r *rdbReader) textDouble() float64 {
	switch n := r.byte1(); n {
	case 253:
		return math.NaN()
	case 254:
		return math.Inf(1)
	case 255:
		return math.Inf(-1)
	default:
		p := r.take(int(n))
		if r.bad {
			return 0
		}
		s, ok := parseZsetScore(p)
		if !ok {
			r.bad = true
		}
		return s
	}
}
