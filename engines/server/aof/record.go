// Package aof is the server's append-only log: framed records, a writer with an fsync policy
// and group commit, a multi-part layout (base file, incremental files, an atomically written
// manifest), replay with Redis's truncated-tail rule, and check/fix for damaged logs.
//
// A file starts with the 8-byte Magic, then holds frames:
//
//	u32 payload length | u32 crc32c(payload) | u32 crc32c(first 8 header bytes) | payload
//
// all little-endian. The header checksum guards the length, so a damaged length in the middle
// of a file is reported as corruption, not mistaken for a torn final record. A payload is
//
//	kind byte | uvarint db | uvarint unix ms | uvarint argc | argc × (uvarint len, bytes)
//
// Kind 'C' is a write command as executed (replayed with the clock set to its time, so IDs that
// XADD * generated and delivery times come out the same); 'B' is a blocked command that was
// served (args[0] is the key it was served from, the rest the command); 'K' is one key's whole
// value in the store's dump encoding (args: key, expiry ms or empty, value), used by base files
// and snapshots. 'M' is a MULTI/EXEC: its records in one frame, so a torn write never keeps half
// a transaction.
package aof

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Magic opens every log, base and snapshot file.
const Magic = "QBAOF1\r\n"

// HeaderLen is a frame header's size.
const HeaderLen = 12

// MaxRecord is the largest payload accepted (Redis's proto-max-bulk-len is 512 MB).
const MaxRecord = 1 << 30

// Record kinds.
const (
	KindCommand = 'C'
	KindServed  = 'B'
	KindKey     = 'K'
	KindMulti   = 'M' // a transaction: each arg is the payload of one of its records
)

// Record is one logged operation.
type Record struct {
	Kind   byte
	DB     int
	TimeMs int64
	Args   [][]byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendRecord appends r's frame to b.
func AppendRecord(b []byte, r Record) []byte {
	start := len(b)
	b = append(b, make([]byte, HeaderLen)...)
	b = AppendPayload(b, r)
	payload := b[start+HeaderLen:]
	h := b[start : start+HeaderLen]
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[8:], crc32.Checksum(h[:8], castagnoli))
	return b
}

// AppendPayload appends r's payload (no frame): the pieces of a KindMulti record.
func AppendPayload(b []byte, r Record) []byte {
	b = append(b, r.Kind)
	b = binary.AppendUvarint(b, uint64(r.DB))
	b = binary.AppendUvarint(b, uint64(r.TimeMs))
	b = binary.AppendUvarint(b, uint64(len(r.Args)))
	for _, a := range r.Args {
		b = binary.AppendUvarint(b, uint64(len(a)))
		b = append(b, a...)
	}
	return b
}

// DecodePayload decodes one payload of a KindMulti record; Args alias p.
func DecodePayload(p []byte) (Record, error) {
	if len(p) == 0 {
		return Record{}, errors.New("empty payload")
	}
	r, _, err := decodePayload(p, nil)
	return r, err
}

// FormatError says where and how a file is damaged. Truncated is true when the file simply
// ends inside its last record (a torn write); everything from Offset on is then incomplete.
type FormatError struct {
	File      string
	Offset    int64
	Truncated bool
	Reason    string
}

func (e *FormatError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("%s: truncated record at byte offset %d: %s", e.File, e.Offset, e.Reason)
	}
	return fmt.Sprintf("Bad file format reading the append only file %s at byte offset %d: %s", e.File, e.Offset, e.Reason)
}

// ZeroTail is a FormatError's Reason when nothing but zeros follows the last record.
const ZeroTail = "zero-filled tail"

// ErrStop may be returned by a Scan callback to end the scan early without error.
var ErrStop = errors.New("stop")

// Scan decodes the records of one file's contents, calling fn with each record and its byte
// offset. The Args slices alias data. It returns the offset just past the last good record and
// a *FormatError if the file is damaged (nil if it ends cleanly).
func Scan(name string, data []byte, fn func(off int64, r Record) error) (int64, error) {
	if len(data) < len(Magic) {
		if string(data) == Magic[:len(data)] {
			return 0, &FormatError{File: name, Offset: 0, Truncated: true, Reason: "file shorter than its header"}
		}
		return 0, &FormatError{File: name, Offset: 0, Reason: "not a qbench append-only file (bad magic)"}
	}
	if string(data[:len(Magic)]) != Magic {
		return 0, &FormatError{File: name, Offset: 0, Reason: "not a qbench append-only file (bad magic)"}
	}
	off := len(Magic)
	var args [][]byte
	for off < len(data) {
		rest := data[off:]
		// extent is how far the frame at off reaches (as far as its header can be trusted).
		bad := func(truncated bool, extent int, reason string) (int64, error) {
			// A tail of zero bytes is what a file system leaves after a crash that extended the
			// file but had not written the data, and what preallocation (writer_prealloc.go)
			// leaves past the last record: the log ends here. A frame that runs into such a tail
			// is one the crash tore: its bytes reached the disk only in part.
			if z := nonZeroLen(rest); !truncated && z == 0 {
				truncated, reason = true, ZeroTail
			} else if !truncated && z < extent {
				truncated, reason = true, "torn record followed by zeros ("+reason+")"
			}
			return int64(off), &FormatError{File: name, Offset: int64(off), Truncated: truncated, Reason: reason}
		}
		if len(rest) < HeaderLen {
			return bad(true, HeaderLen, "incomplete frame header")
		}
		if crc32.Checksum(rest[:8], castagnoli) != binary.LittleEndian.Uint32(rest[8:]) {
			return bad(false, HeaderLen, "frame header checksum mismatch")
		}
		n := int(binary.LittleEndian.Uint32(rest))
		if n == 0 || n > MaxRecord {
			return bad(false, HeaderLen, fmt.Sprintf("invalid record length %d", n))
		}
		if len(rest) < HeaderLen+n {
			return bad(true, HeaderLen+n, fmt.Sprintf("record of %d bytes, only %d present", n, len(rest)-HeaderLen))
		}
		payload := rest[HeaderLen : HeaderLen+n]
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
			return bad(false, HeaderLen+n, "record checksum mismatch")
		}
		r, a, err := decodePayload(payload, args[:0])
		if err != nil {
			return bad(false, HeaderLen+n, err.Error())
		}
		args = a
		if fn != nil {
			if err := fn(int64(off), r); err != nil {
				if err == ErrStop {
					return int64(off + HeaderLen + n), nil
				}
				return int64(off), err
			}
		}
		off += HeaderLen + n
	}
	return int64(off), nil
}

// nonZeroLen is the length of b without its trailing zero bytes.
func nonZeroLen(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0 {
			return i + 1
		}
	}
	return 0
}

func decodePayload(p []byte, args [][]byte) (Record, [][]byte, error) {
	var r Record
	r.Kind = p[0]
	if r.Kind != KindCommand && r.Kind != KindServed && r.Kind != KindKey && r.Kind != KindMulti {
		return r, args, fmt.Errorf("unknown record kind %q", r.Kind)
	}
	p = p[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	db, ok1 := next()
	ms, ok2 := next()
	argc, ok3 := next()
	if !ok1 || !ok2 || !ok3 || db > 1<<20 || argc > uint64(len(p)) {
		return r, args, errors.New("malformed record header")
	}
	r.DB, r.TimeMs = int(db), int64(ms)
	for i := uint64(0); i < argc; i++ {
		l, ok := next()
		if !ok || l > uint64(len(p)) {
			return r, args, errors.New("malformed argument")
		}
		args = append(args, p[:l:l])
		p = p[l:]
	}
	if len(p) != 0 {
		return r, args, errors.New("trailing bytes in record")
	}
	if ((r.Kind == KindCommand || r.Kind == KindMulti) && argc == 0) || (r.Kind == KindServed && argc < 2) || (r.Kind == KindKey && argc != 3) {
		return r, args, fmt.Errorf("record of kind %q with %d arguments", r.Kind, argc)
	}
	r.Args = args
	return r, args, nil
}
