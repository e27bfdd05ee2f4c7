package store

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// appendZiplist encodes elems as Redis 6 would (integers in the smallest integer encoding).
func appendZiplist(elems []string) []byte {
	b := make([]byte, 10)
	prev := 0
	for _, e := range elems {
		at := len(b)
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(prev))
		}
		if n, err := strconv.ParseInt(e, 10, 64); err == nil && strconv.FormatInt(n, 10) == e {
			switch {
			case n >= 0 && n <= 12:
				b = append(b, 0xf1+byte(n))
			case n >= -128 && n < 128:
				b = append(b, 0xfe, byte(n))
			case n >= -1<<15 && n < 1<<15:
				b = binary.LittleEndian.AppendUint16(append(b, 0xc0), uint16(n))
			case n >= -1<<23 && n < 1<<23:
				b = append(b, 0xf0, byte(n), byte(n>>8), byte(n>>16))
			case n >= -1<<31 && n < 1<<31:
				b = binary.LittleEndian.AppendUint32(append(b, 0xd0), uint32(n))
			default:
				b = binary.LittleEndian.AppendUint64(append(b, 0xe0), uint64(n))
			}
		} else {
			switch l := len(e); {
			case l < 64:
				b = append(b, byte(l))
			case l < 16384:
				b = append(b, 0x40|byte(l>>8), byte(l))
			default:
				b = binary.BigEndian.AppendUint32(append(b, 0x80), uint32(l))
			}
			b = append(b, e...)
		}
		prev = len(b) - at
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint16(b[8:], uint16(len(elems)))
	return b
}

// TestRDB6Encodings: an RDB 9 file's lists (ziplist, quicklist of ziplists), small hashes
// (ziplist) and streams (STREAM_LISTPACKS, whose missing metadata is derived as Redis 7.0's
// load does) are read; a damaged ziplist is refused.
func TestRDB6Encodings(t *testing.T) {
	elems := []string{"a", "0", "12", "13", "-128", "300", "-70000", "8388608", "-3000000000", "007", strings.Repeat("x", 300), strings.Repeat("y", 20000)}
	zl := appendZiplist(elems)
	quick := cat([]byte{rdbListQuicklist}, rdbStr("q"), []byte{2}, rdbAppendString(nil, zl), rdbAppendString(nil, appendZiplist([]string{"last"})))
	hash := cat([]byte{rdbHashZiplist}, rdbStr("h"), rdbAppendString(nil, appendZiplist([]string{"f", "1", "g", "two"})))
	// A Redis 6 stream: entries 1-1 to 5-1, a group at 5-1 and one at 3-1, no PEL or consumers.
	st := NewStream()
	for i := uint64(1); i <= 5; i++ {
		st.Append(ID{i, 1}, [][]byte{[]byte("f"), []byte("v")})
	}
	d, _ := AppendRDBDump(nil, st, false)
	nodes := d[1 : len(d)-10-9] // without the 7.0 tail: length, last, first, max-deleted, added, 0 groups
	v1 := cat([]byte{rdbStreamListpacks}, rdbStr("s"), nodes, []byte{5, 5, 1, 2},
		rdbStr("at-end"), []byte{5, 1, 0, 0}, rdbStr("mid"), []byte{3, 1, 0, 0})
	keys, err := ReadRDBFile(rdbFile("0009", true,
		cat([]byte{rdbListZiplist}, rdbStr("l"), rdbAppendString(nil, zl)), quick, hash, v1), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	keys[0].Value.(*List).Each(0, false, func(_ int, e []byte) bool { got = append(got, string(e)); return true })
	if strings.Join(got, ",") != strings.Join(elems, ",") {
		t.Errorf("ziplist list = %q", got)
	}
	if n := keys[1].Value.(*List).Len(); n != len(elems)+1 {
		t.Errorf("quicklist of 2 ziplists: %d elements", n)
	}
	if v, _ := keys[2].Value.(*Hash).Get([]byte("g")); string(v) != "two" {
		t.Errorf("ziplist hash g = %q", v)
	}
	s := keys[3].Value.(*Stream)
	if s.EntriesAdded != 5 || s.FirstID != (ID{1, 1}) || s.LastID != (ID{5, 1}) || !s.MaxDeletedID.IsZero() {
		t.Errorf("stream metadata: added %d first %v last %v max-deleted %v", s.EntriesAdded, s.FirstID, s.LastID, s.MaxDeletedID)
	}
	gs := s.Groups()
	if len(gs) != 2 || gs[0].Name != "at-end" || gs[0].EntriesRead != 5 || gs[1].EntriesRead != InvalidEntriesRead {
		t.Errorf("groups' entries-read not derived as Redis 7.0 does: %+v %+v", gs[0], gs[1])
	}
	bad := append([]byte(nil), zl...)
	bad[10+1] = 0x85 // entry 1's encoding: 10xxxxxx other than 0x80 is none of ziplist's
	if _, err := ReadRDBFile(rdbFile("0009", true, cat([]byte{rdbListZiplist}, rdbStr("l"), rdbAppendString(nil, bad))), testLimits); err == nil || !strings.Contains(err.Error(), `key "l"`) {
		t.Errorf("damaged ziplist: %v", err)
	}
}
