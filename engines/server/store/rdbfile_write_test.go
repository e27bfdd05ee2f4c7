package store

import (
	"bytes"
	"strings"
	"testing"
)

// TestAppendRDBFile: a file written by AppendRDBFile, compressed or not, reads back (ReadRDBFile)
// to the same keys, databases, expiries and DUMP payloads; keys out of database order and a
// value with no RDB encoding are refused with nothing appended.
func TestAppendRDBFile(t *testing.T) {
	long := []byte(strings.Repeat("abcdefgh", 50))
	l := &List{}
	l.PushRight(long)
	l.PushRight([]byte("7"))
	keys := []RDBKey{
		{DB: 0, Key: "s", Value: &String{B: long}, ExpireAtMs: 1 << 41},
		{DB: 0, Key: string(long), Value: l},
		{DB: 2, Key: "x", Value: sampleStream()},
		{DB: 15, Key: "n", Value: &String{B: []byte("-12")}},
	}
	for _, lzf := range []bool{false, true} {
		data, err := AppendRDBFile([]byte("prefix"), keys, 1700000000, lzf)
		if err != nil || !bytes.HasPrefix(data, []byte("prefixREDIS0010")) {
			t.Fatalf("lzf %v: %v %q", lzf, err, data[:min(len(data), 20)])
		}
		if lzf == bytes.Contains(data, long) {
			t.Errorf("lzf %v: long string stored plain: %v", lzf, !lzf)
		}
		got, err := ReadRDBFile(data[len("prefix"):], testLimits)
		if err != nil || len(got) != len(keys) {
			t.Fatalf("lzf %v: read back: %v, %d keys", lzf, err, len(got))
		}
		for i, k := range got {
			w, _ := AppendRDBDump(nil, keys[i].Value, false)
			g, _ := AppendRDBDump(nil, k.Value, false)
			if k.DB != keys[i].DB || k.Key != keys[i].Key || k.ExpireAtMs != keys[i].ExpireAtMs || !bytes.Equal(w, g) {
				t.Errorf("lzf %v: key %d read back as db %d %.20q expiry %d", lzf, i, k.DB, k.Key, k.ExpireAtMs)
			}
		}
	}
	if b, err := AppendRDBFile([]byte("p"), []RDBKey{keys[2], keys[0]}, 0, true); err == nil || string(b) != "p" {
		t.Errorf("db 2 then db 0: %v, %q", err, b)
	}
	if b, err := AppendRDBFile(nil, []RDBKey{{Key: "f", Value: 3.5}}, 0, true); err == nil || len(b) != 0 {
		t.Errorf("a float value: %v, %q", err, b)
	}
}
