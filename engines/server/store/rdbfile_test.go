package store

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// rdbFile builds an RDB file: the magic, the records, EOF and the CRC-64 (crc false: zero, as
// rdbchecksum no writes).
func rdbFile(ver string, crc bool, records ...[]byte) []byte {
	b := []byte("REDIS" + ver)
	for _, r := range records {
		b = append(b, r...)
	}
	b = append(b, rdbOpEOF)
	sum := uint64(0)
	if crc {
		sum = CRC64(b)
	}
	return binary.LittleEndian.AppendUint64(b, sum)
}

func rdbStr(s string) []byte { return rdbAppendString(nil, []byte(s)) }

func rdbStringKey(k, v string) []byte {
	return append(append([]byte{rdbString}, rdbStr(k)...), rdbStr(v)...)
}

func cat(parts ...[]byte) (b []byte) {
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func expireMs(ms int64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{rdbOpExpireMs}, uint64(ms))
}

func expireSec(sec uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{rdbOpExpireSec}, sec)
}

// TestReadRDBFile: the opcodes Redis writes around keys are read or skipped, expiries stay with
// their key, databases are kept; what the server cannot hold refuses the file with an offset.
func TestReadRDBFile(t *testing.T) {
	aux := cat([]byte{rdbOpAux}, rdbStr("redis-ver"), rdbStr("7.0.15"))
	setLP := cat([]byte{20}, rdbStr("z"), rdbStr("not decoded")) // Redis 7.2's set listpack
	for _, tc := range []struct {
		name string
		file []byte
		want []RDBKey // nil with err set
		err  string
	}{
		{"empty", rdbFile("0010", true), nil, ""},
		{"aux-resize-idle-freq", rdbFile("0010", true, aux, []byte{rdbOpSelectDB, 0, rdbOpResizeDB, 1, 0},
			[]byte{rdbOpIdle, 5}, rdbStringKey("a", "1"), []byte{rdbOpFreq, 9}, rdbStringKey("b", "2")),
			[]RDBKey{{Key: "a"}, {Key: "b"}}, ""},
		{"expiries-and-dbs", rdbFile("0010", true, expireMs(1234), rdbStringKey("a", "1"), rdbStringKey("b", "2"),
			[]byte{rdbOpSelectDB, 3}, expireSec(7), rdbStringKey("c", "3")),
			[]RDBKey{{Key: "a", ExpireAtMs: 1234}, {Key: "b"}, {DB: 3, Key: "c", ExpireAtMs: 7000}}, ""},
		{"version-9-no-checksum", rdbFile("0009", false, rdbStringKey("a", "1")), []RDBKey{{Key: "a"}}, ""},
		{"version-11", rdbFile("0011", true), nil, "offset 5: RDB version"},
		{"not-rdb", []byte("RADIS0010"), nil, "offset 0: not an RDB file"},
		{"db-16", rdbFile("0010", true, []byte{rdbOpSelectDB, 16}), nil, "offset 9: SELECTDB 16"},
		{"set-listpack", rdbFile("0010", true, aux, []byte{rdbOpSelectDB, 2}, rdbStringKey("a", "1"), setLP), nil,
			`offset 34: key "z" in db 2 is a set (listpack, Redis 7.2)`},
		{"module", rdbFile("0010", true, []byte{7}, rdbStr("m")), nil, `key "m" in db 0 is a module value`},
		{"function", rdbFile("0010", true, []byte{rdbOpFunction2}, rdbStr("#!lua name=x")), nil, "offset 9: the file holds a function library"},
		{"module-aux", rdbFile("0010", true, []byte{rdbOpModuleAux, 1}), nil, "offset 9: the file holds module data"},
		{"bad-value", rdbFile("0010", true, []byte{rdbSetIntset}, rdbStr("s"), rdbStr("short")), nil, `offset 9: key "s" in db 0: bad or truncated value`},
		{"bad-crc", func() []byte { b := rdbFile("0010", true, rdbStringKey("a", "1")); b[len(b)-1]++; return b }(), nil,
			"offset 15: wrong CRC-64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := ReadRDBFile(tc.file, testLimits)
			if tc.err != "" {
				var fe *RDBFileError
				if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != len(tc.want) {
				t.Fatalf("%d keys, want %d", len(keys), len(tc.want))
			}
			for i, w := range tc.want {
				k := keys[i]
				if k.DB != w.DB || k.Key != w.Key || k.ExpireAtMs != w.ExpireAtMs {
					t.Errorf("key %d = db %d %q expire %d, want db %d %q expire %d", i, k.DB, k.Key, k.ExpireAtMs, w.DB, w.Key, w.ExpireAtMs)
				}
				if _, ok := k.Value.(*String); !ok {
					t.Errorf("key %q: %T", k.Key, k.Value)
				}
			}
		})
	}
}

// TestReadRDBFileTruncations: every prefix of a file with each type is refused with an offset
// inside the prefix, never a panic and never a partial result.
func TestReadRDBFileTruncations(t *testing.T) {
	l := &List{}
	for _, e := range []string{"a", "12", strings.Repeat("x", 100)} {
		l.PushRight([]byte(e))
	}
	var records [][]byte
	records = append(records, []byte{rdbOpSelectDB, 1}, expireMs(1<<40), rdbStringKey("s", "v"))
	// A small stream with every part (a tombstone, a group, a consumer, pending entries): every
	// prefix is decoded, so the file stays short (a second under -race).
	st := NewStream()
	for i := uint64(1); i <= 12; i++ {
		st.Append(ID{i, 0}, [][]byte{[]byte("f"), []byte{byte(i)}})
	}
	st.Delete(ID{3, 0})
	g, _ := st.CreateGroup("g", ID{5, 0}, 4)
	c, _ := g.CreateConsumer("c", 5)
	for i := uint64(4); i <= 5; i++ {
		c.PEL.Add(g.PEL.Add(Nack{ID: ID{i, 0}, DeliveryTime: int64(100 + i), DeliveryCount: 1, Consumer: c}))
	}
	for k, v := range map[string]any{"l": l, "st": st} {
		d, _ := AppendRDBDump(nil, v, false)
		d = d[:len(d)-10] // the type byte and the value, without the DUMP footer
		records = append(records, cat(d[:1], rdbStr(k), d[1:]))
	}
	file := rdbFile("0010", true, records...)
	if keys, err := ReadRDBFile(file, testLimits); err != nil || len(keys) != 3 {
		t.Fatalf("whole file: %d keys, %v", len(keys), err)
	}
	for n := 0; n < len(file); n++ {
		keys, err := ReadRDBFile(file[:n], testLimits)
		var fe *RDBFileError
		if !errors.As(err, &fe) || keys != nil {
			t.Fatalf("prefix %d: %v, %d keys", n, err, len(keys))
		}
		if fe.Offset < 0 || fe.Offset > n {
			t.Fatalf("prefix %d: offset %d outside it", n, fe.Offset)
		}
	}
}

// FuzzReadRDBFile: any file is loaded or refused with an RDBFileError, never a panic.
func FuzzReadRDBFile(f *testing.F) {
	f.Add(rdbFile("0010", false, rdbStringKey("a", "1"), []byte{rdbOpSelectDB, 3}, expireMs(5), rdbStringKey("b", "2")))
	d, _ := AppendRDBDump(nil, sampleStream(), false)
	f.Add(rdbFile("0010", false, cat(d[:1], rdbStr("st"), d[1:len(d)-10])))
	f.Fuzz(func(t *testing.T, file []byte) {
		if _, err := ReadRDBFile(file, testLimits); err != nil {
			var fe *RDBFileError
			if !errors.As(err, &fe) {
				t.Fatalf("%T %v", err, err)
			}
		}
	})
}

// TestLZFClaimBounded: a compressed string claiming far more than LZF can expand to is refused
// before anything of that size is allocated.
func TestLZFClaimBounded(t *testing.T) {
	// type string, key "k", value: LZF (0xC3), clen 2, ulen 0x80 + 4 GiB-1
	rec := cat([]byte{rdbString}, rdbStr("k"), []byte{0xC3, 2, 0x80, 0xff, 0xff, 0xff, 0xff, 0, 'a'})
	if _, err := ReadRDBFile(rdbFile("0010", true, rec), testLimits); err == nil || !strings.Contains(err.Error(), `key "k"`) {
		t.Fatalf("error %v", err)
	}
	// 176 bytes from 2 is within bounds but not what the data holds: refused too.
	rec = cat([]byte{rdbString}, rdbStr("k"), []byte{0xC3, 2, 0x40, 176, 0, 'a'})
	if _, err := ReadRDBFile(rdbFile("0010", true, rec), testLimits); err == nil {
		t.Fatal("accepted")
	}
}

// BenchmarkReadRDBFile: a file with one 100,000-entry stream (Redis's layout, as DUMP writes it).
func BenchmarkReadRDBFile(b *testing.B) {
	st := NewStream()
	for i := uint64(1); i <= 100000; i++ {
		st.Append(ID{1700000000000 + i/10, i % 10}, [][]byte{[]byte("d"), []byte("payload-" + strconv.Itoa(int(i)))})
	}
	d, _ := AppendRDBDump(nil, st, false)
	file := rdbFile("0010", true, cat(d[:1], rdbStr("st"), d[1:len(d)-10]))
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ReadRDBFile(file, testLimits); err != nil {
			b.Fatal(err)
		}
	}
}
