package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"
)

// zsetOf builds a zset as ZADD does one pair at a time: listpack while within 128 members of at
// most 64 bytes.
func zsetOf(pairs ...any) *Zset {
	z := NewZset(true)
	for i := 0; i < len(pairs); i += 2 {
		z.Set([]byte(pairs[i].(string)), pairs[i+1].(float64), 128, 64)
	}
	return z
}

// payload wraps an RDB object (type byte first) in DUMP's footer.
func payload(obj []byte) []byte {
	p := binary.LittleEndian.AppendUint16(append([]byte(nil), obj...), rdbVersion)
	return binary.LittleEndian.AppendUint64(p, CRC64(p))
}

// TestRDBZsetGolden: DUMP payloads taken from redis-server 7.0.15 (rdbcompression no) are what
// AppendRDBDump writes for the same zset, and they decode to it. The listpack holds every kind
// of score entry (integers up to 2^52 and beyond, -0, %.17g text, 1e+20, inf, -inf, an integer
// member); the ZSET_2 one has a 70-byte member, an int-encoded member and scores written from
// the greatest.
func TestRDBZsetGolden(t *testing.T) {
	for _, tc := range []struct {
		name, hex string
		z         *Zset
	}{
		{"listpack", "11408e8e0000001800816702842d696e6605816a02f4000000000000f0ff09816302000181640293302e313030303030303030303030303030303114816102010181620292312e313030303030303030303030303030311381690283332e35047b016401816c02f4000000000000100009816802f4884b6b5d54dc2b00098165028531652b32300681660283696e6604ff0a00d2182e94ef373fc4",
			// ZADD k 1 a 1.1 b -0 c 0.1 d 1e20 e inf f -inf g 12345678901234567 h 3.5 i
			//        -4503599627370496 j 4503599627370496 l; ZADD k 100 123
			zsetOf("a", 1.0, "b", 1.1, "c", math.Copysign(0, -1), "d", 0.1, "e", 1e20, "f", math.Inf(1), "g", math.Inf(-1),
				"h", 12345678901234567.0, "i", 3.5, "j", -4503599627370496.0, "l", 4503599627370496.0, "123", 100.0)},
		{"zset2", "0505404678787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878000000000000084001620000000000000040c00c000000000000f83f0161000000000000f03f016300000000000000000a0070116c75895830a2",
			// ZADD z 1 a 2 b 1.5 12 -0 c; ZADD z 3 <70 x>
			zsetOf("a", 1.0, "b", 2.0, "12", 1.5, "c", math.Copysign(0, -1), strings.Repeat("x", 70), 3.0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := hex.DecodeString(tc.hex)
			got, ok := AppendRDBDump(nil, tc.z, false)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("AppendRDBDump\n got %x\nwant %x", got, want)
			}
			v, err := DecodeRDBDump(want, testLimits)
			if err != nil {
				t.Fatal(err)
			}
			z := v.(*Zset)
			if z.IsListpack() != tc.z.IsListpack() || entriesString(z.Entries(0, -1, false)) != entriesString(tc.z.Entries(0, -1, false)) {
				t.Fatalf("decoded %v listpack %v, want %v", entriesString(z.Entries(0, -1, false)), z.IsListpack(), entriesString(tc.z.Entries(0, -1, false)))
			}
		})
	}
}

// TestRDBZsetRoundTrip: edge scores, binary and long members and sizes around the listpack limit
// survive AppendRDBDump and DecodeRDBDump with their encoding, bit-exact scores (-0 kept in a
// skiplist, 0 in a listpack), and the same payload when dumped again.
func TestRDBZsetRoundTrip(t *testing.T) {
	negZero := math.Copysign(0, -1)
	scores := []float64{math.Inf(1), math.Inf(-1), negZero, 0, 1, -1, 127, 128, -4096, 1 << 31, 1 << 62, -(1 << 62), 1<<62 + 1024,
		1 << 63, 0.1, 1.0 / 3, -2.5e-300, 5e-324, math.MaxFloat64, -math.MaxFloat64, 123456789.12345679}
	many := func(n int, long bool) *Zset {
		z := NewZset(true)
		for i := 0; i < n; i++ {
			m := fmt.Sprintf("m%d", i)
			if long && i == n/2 {
				m = strings.Repeat("L", 65)
			}
			z.Set([]byte(m), float64(i)*0.5, 128, 64)
		}
		return z
	}
	edge := func(listpack bool) *Zset {
		z := NewZset(listpack)
		for i, s := range scores {
			z.Set([]byte(fmt.Sprintf("s%02d", i)), s, 1<<30, 1<<30)
		}
		z.Set([]byte("\x00\xff\r\n"), 2, 1<<30, 1<<30)
		z.Set([]byte("-7"), 3, 1<<30, 1<<30)
		z.Set([]byte("99999999999"), 4, 1<<30, 1<<30) // 11 digits, beyond 32 bits: a string
		return z
	}
	for _, tc := range []struct {
		name     string
		z        *Zset
		listpack bool
		maxLP    int // zset-max-listpack-entries of the load
	}{
		{"edge-listpack", edge(true), true, 128},
		{"edge-skiplist", edge(false), true, 128}, // 24 short members: a loaded ZSET_2 becomes a listpack
		{"edge-skiplist-kept", edge(false), false, 0},
		{"one", many(1, false), true, 128},
		{"128", many(128, false), true, 128},
		{"129", many(129, false), false, 128},
		{"long-member", many(10, true), false, 128},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := AppendRDBDump(nil, tc.z, false)
			if want := byte(rdbZset2); tc.z.IsListpack() {
				if b[0] != rdbZsetListpack {
					t.Fatalf("type %d, want 17", b[0])
				}
			} else if b[0] != want {
				t.Fatalf("type %d, want 5", b[0])
			}
			lim := testLimits
			lim.ZsetMaxEntries = tc.maxLP
			v, err := DecodeRDBDump(b, lim)
			if err != nil {
				t.Fatal(err)
			}
			z := v.(*Zset)
			if z.IsListpack() != tc.listpack || z.Len() != tc.z.Len() {
				t.Fatalf("listpack %v len %d, want %v %d", z.IsListpack(), z.Len(), tc.listpack, tc.z.Len())
			}
			for _, e := range tc.z.Entries(0, -1, false) {
				s, ok := z.Score(e.Member)
				want := e.Score
				if z.IsListpack() && want == 0 {
					want = 0 // a listpack stores -0 as the integer 0
				}
				if !ok || math.Float64bits(s) != math.Float64bits(want) {
					t.Errorf("member %q: score %v (%v), want %v", e.Member, s, ok, want)
				}
			}
			if z.IsListpack() == tc.z.IsListpack() {
				if b2, _ := AppendRDBDump(nil, z, false); !bytes.Equal(b, b2) {
					t.Errorf("payload differs after a round trip")
				}
			}
		})
	}
}

// TestRDBZsetOldEncodings: ZSET (scores as text, Redis < 5) and ZSET_ZIPLIST (Redis 6) load,
// with the encoding Redis 7.0 gives them.
func TestRDBZsetOldEncodings(t *testing.T) {
	text := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	zset1 := cat([]byte{rdbZset, 3}, rdbStr("a"), text("1.5"), rdbStr("b"), []byte{254}, rdbStr("c"), []byte{255})
	zl := cat([]byte{rdbZsetZiplist}, rdbAppendString(nil, appendZiplist([]string{"c", "-inf", "a", "1", "12", "0.10000000000000001", "b", "3", "d", "inf"})))
	var big []string
	for i := 0; i < 130; i++ {
		big = append(big, fmt.Sprintf("m%03d", i), fmt.Sprint(i))
	}
	zlBig := cat([]byte{rdbZsetZiplist}, rdbAppendString(nil, appendZiplist(big)))
	for _, tc := range []struct {
		name     string
		obj      []byte
		want     string
		listpack bool
	}{
		{"zset", zset1, "c=-Inf a=1.5 b=+Inf", true},
		{"ziplist", zl, "c=-Inf 12=0.1 a=1 b=3 d=+Inf", true},
		{"ziplist-130", zlBig, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := DecodeRDBDump(payload(tc.obj), testLimits)
			if err != nil {
				t.Fatal(err)
			}
			z := v.(*Zset)
			var got []string
			z.Range(0, z.Len()-1, false, func(m []byte, s float64) bool {
				got = append(got, fmt.Sprintf("%s=%v", m, s))
				return true
			})
			if tc.want != "" && strings.Join(got, " ") != tc.want {
				t.Errorf("got %q, want %q", strings.Join(got, " "), tc.want)
			}
			if z.IsListpack() != tc.listpack {
				t.Errorf("listpack %v, want %v", z.IsListpack(), tc.listpack)
			}
		})
	}
}

// TestRDBZsetRefused: NaN scores, bad score text, duplicates, odd listpacks and empty zsets
// are bad payloads, as in Redis's load.
func TestRDBZsetRefused(t *testing.T) {
	nan := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
	one := binary.LittleEndian.AppendUint64(nil, math.Float64bits(1))
	for name, obj := range map[string][]byte{
		"zset2-nan":      cat([]byte{rdbZset2, 1}, rdbStr("a"), nan),
		"zset2-dup":      cat([]byte{rdbZset2, 2}, rdbStr("a"), one, rdbStr("a"), one),
		"zset2-empty":    {rdbZset2, 0},
		"zset2-short":    cat([]byte{rdbZset2, 1}, rdbStr("a"), one[:7]),
		"zset-nan":       cat([]byte{rdbZset, 1}, rdbStr("a"), []byte{253}),
		"zset-junk":      cat([]byte{rdbZset, 1}, rdbStr("a"), []byte{3}, []byte("1x5")),
		"listpack-nan":   cat([]byte{rdbZsetListpack}, rdbAppendString(nil, appendListpack(nil, [][]byte{[]byte("a"), []byte("nan")}))),
		"listpack-odd":   cat([]byte{rdbZsetListpack}, rdbAppendString(nil, appendListpack(nil, [][]byte{[]byte("a"), []byte("1"), []byte("b")}))),
		"listpack-dup":   cat([]byte{rdbZsetListpack}, rdbAppendString(nil, appendListpack(nil, [][]byte{[]byte("a"), []byte("1"), []byte("a"), []byte("2")}))),
		"listpack-empty": cat([]byte{rdbZsetListpack}, rdbAppendString(nil, appendListpack(nil, nil))),
		"ziplist-junk":   cat([]byte{rdbZsetZiplist}, rdbAppendString(nil, appendZiplist([]string{"a", "one"}))),
	} {
		if v, err := DecodeRDBDump(payload(obj), testLimits); err == nil {
			t.Errorf("%s: decoded to %v", name, v)
		}
	}
}

// TestRDBFileZset: a dump.rdb's sorted sets load like the other types.
func TestRDBFileZset(t *testing.T) {
	d, _ := AppendRDBDump(nil, zsetOf("a", 1.0, "b", 2.0), false)
	keys, err := ReadRDBFile(rdbFile("0010", true, cat(d[:1], rdbStr("z"), d[1:len(d)-10])), testLimits)
	if err != nil || len(keys) != 1 {
		t.Fatalf("%v %v", keys, err)
	}
	if z, ok := keys[0].Value.(*Zset); !ok || z.Len() != 2 {
		t.Fatalf("%T", keys[0].Value)
	}
}

// BenchmarkDecodeRDBZset: RESTORE's decode of a 100,000-member ZSET_2 payload.
func BenchmarkDecodeRDBZset(b *testing.B) {
	z := NewZset(false)
	for i := 0; i < 100000; i++ {
		z.Set([]byte(fmt.Sprintf("member:%d", i)), float64(i)*1.5, 0, 0)
	}
	p, _ := AppendRDBDump(nil, z, false)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeRDBDump(p, testLimits); err != nil {
			b.Fatal(err)
		}
	}
}
