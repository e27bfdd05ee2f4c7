package store

import (
	"bytes"
	"encoding/binary"
	"testing"
)

var testLimits = RDBLimits{IntsetMax: 512, HashMaxEntries: 512, HashMaxValue: 64, ZsetMaxEntries: 128, ZsetMaxValue: 64, NodeMaxEntries: 100, NodeMaxBytes: 4096}

// TestCRC64: Redis's crc64 test vector (crc64.c).
func TestCRC64(t *testing.T) {
	if got := CRC64([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64 = %#x", got)
	}
}

// TestLZFDecompress: a literal run, then a back reference overlapping its own output.
func TestLZFDecompress(t *testing.T) {
	// "abc" literal (ctrl 2), then a reference of length 7 (ctrl>>5 = 5, +2) at offset 3.
	in := []byte{2, 'a', 'b', 'c', 5<<5 | 0, 2}
	out, ok := lzfDecompress(in, 10)
	if !ok || string(out) != "abcabcabca" {
		t.Fatalf("lzf = %q %v", out, ok)
	}
	if _, ok := lzfDecompress(in, 9); ok {
		t.Fatal("a wrong length was accepted")
	}
}

// TestRDBRoundTrip: every writable type decodes to a value that dumps identically.
func TestRDBRoundTrip(t *testing.T) {
	l := &List{}
	for _, e := range []string{"a", "0", "127", "-4096", "4095", "40000", "-8388608", "2147483647", "9223372036854775807", "007", string(make([]byte, 5000))} {
		l.PushRight([]byte(e))
	}
	ints, strs, h := NewSet(), NewSet(), NewHash()
	ints.Add([]byte("-40000"), 512)
	ints.Add([]byte("3"), 512)
	strs.Add([]byte("x"), 512)
	h.Set([]byte("f"), []byte("v"), 512, 64)
	for _, v := range []any{&String{B: []byte("hi")}, l, ints, strs, h, sampleStream(), NewStream()} {
		b, ok := AppendRDBDump(nil, v, false)
		if !ok {
			t.Fatalf("%T not dumped", v)
		}
		got, err := DecodeRDBDump(b, testLimits)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		if b2, _ := AppendRDBDump(nil, got, false); !bytes.Equal(b, b2) {
			t.Fatalf("%T differs after a round trip", v)
		}
		b[len(b)-1] ^= 1
		if _, err := DecodeRDBDump(b, testLimits); err != ErrRDBChecksum {
			t.Fatalf("%T: damaged CRC gave %v", v, err)
		}
	}
}

// FuzzDecodeRDBDump: any payload with a right CRC is decoded or refused, never a panic.
func FuzzDecodeRDBDump(f *testing.F) {
	b, _ := AppendRDBDump(nil, &String{B: []byte("x")}, false)
	f.Add(b[:len(b)-10])
	l := &List{}
	l.PushRight([]byte("abc"))
	b, _ = AppendRDBDump(nil, l, false)
	f.Add(b[:len(b)-10])
	b, _ = AppendRDBDump(nil, sampleStream(), false)
	f.Add(b[:len(b)-10])
	z := NewZset(true)
	z.Set([]byte("a"), 1.5, 128, 64)
	z.Set([]byte("12"), 2, 128, 64)
	b, _ = AppendRDBDump(nil, z, false)
	f.Add(b[:len(b)-10])
	z.Set([]byte(string(make([]byte, 70))), -3, 128, 64) // a skiplist: ZSET_2
	b, _ = AppendRDBDump(nil, z, false)
	f.Add(b[:len(b)-10])
	f.Fuzz(func(t *testing.T, body []byte) {
		p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), rdbVersion)
		p = binary.LittleEndian.AppendUint64(p, CRC64(p))
		DecodeRDBDump(p, testLimits)
	})
}
